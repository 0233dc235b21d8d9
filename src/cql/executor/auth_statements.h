// Role and permission statements (CREATE / ALTER / DROP ROLE and USER,
// GRANT / REVOKE, LIST ROLES / USERS / permissions) run against the
// AuthService. LIST results have Cassandra 4's columns:
//   LIST ROLES        role text, super boolean, login boolean, options map<text, text>, datacenters text
//   LIST USERS        name text, super boolean, datacenters text
//   LIST permissions  role text, username text, resource text, permission text
//
// Errors: those of AuthService; InvalidArgument when the server runs
// without an authenticator (no roles exist then).
//
// Thread safety: reentrant.
#pragma once

#include <optional>
#include <string>

#include "auth/auth_service.h"
#include "cql/executor/result_set.h"
#include "cql/parser/raw_statements.h"

namespace tessera::cql {

bool IsAuthStatement(const RawStatement& statement);

// REQUIRES: IsAuthStatement(statement). `auth` may be null (no
// authenticator); `role` is the logged-in role; `keyspace` the current one.
// Returns rows for LIST statements, nullopt (a Void result) for the others.
Result<std::optional<ResultSet>> ExecuteAuthStatement(auth::AuthService* auth, const std::string& role,
                                                      const RawStatement& statement, const std::string& keyspace);

}  // namespace tessera::cql
