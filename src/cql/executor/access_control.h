// Which permission each statement needs (Cassandra 4's checkAccess of every
// CQLStatement) and the protection of the system keyspaces:
//   SELECT                      SELECT on the table (system and system_schema are readable by all);
//                               of a materialized view: SELECT on its base table (as Cassandra)
//   INSERT / UPDATE / DELETE,
//   BATCH, TRUNCATE             MODIFY on the table
//   CREATE KEYSPACE             CREATE on ALL KEYSPACES
//   CREATE TABLE                CREATE on the keyspace
//   ALTER KEYSPACE / TABLE      ALTER on the keyspace / table
//   DROP KEYSPACE / TABLE       DROP on the keyspace / table
//   CREATE / DROP FUNCTION,
//   AGGREGATE                   CREATE / DROP on the keyspace
//   USE                         nothing
// Role and permission statements are checked by AuthService itself.
// Changing a system keyspace (system, system_schema, system_auth) is refused
// to everyone, superusers included: "system_auth keyspace is not user-modifiable."
//
// Thread safety: reentrant (AuthService is thread-safe).
#pragma once

#include <string>

#include "auth/auth_service.h"
#include "cql/parser/raw_statements.h"
#include "db/catalog.h"

namespace tessera::cql {

// `keyspace` is the connection's current keyspace; `catalog` tells a view
// from a table. Errors: Unauthorized.
Status CheckAccess(auth::AuthService& auth, const Catalog& catalog, const std::string& role,
                   const RawStatement& statement, const std::string& keyspace);

}  // namespace tessera::cql
