// User-defined type statements: CREATE TYPE, ALTER TYPE (ADD, RENAME), DROP
// TYPE, bound to the catalog (db/catalog.h) with Cassandra 4.1's rules and
// messages (CQL 3 §User-Defined Types). Errors are InvalidArgument (0x2200)
// or AlreadyExists (0x2400) through error_mapping.h.
//
// A type's fields are frozen inside it (a collection or another user type in
// a field is stored frozen); a type may be used frozen anywhere, and
// non-frozen as a regular or static column, whose fields are cells of their
// own (CqlType::IsMultiCell, UserTypeFieldPath).
//
// Thread safety: functions are thread-safe (the Database is).
#pragma once

#include <string>

#include "common/status.h"
#include "cql/executor/schema_statements.h"
#include "cql/parser/raw_statements.h"
#include "db/database.h"

namespace tessera::cql {

// `keyspace` is the connection's keyspace, used when the statement names none.
Result<SchemaOutcome> ExecuteCreateType(Database& db, const CreateTypeStatement& stmt, const std::string& keyspace);
Result<SchemaOutcome> ExecuteAlterType(Database& db, const AlterTypeStatement& stmt, const std::string& keyspace);
// REQUIRES: stmt.target == DropStatement::Target::kType.
Result<SchemaOutcome> ExecuteDropType(Database& db, const DropStatement& stmt, const std::string& keyspace);

// Parses a field type of a user type: collections and user types in it are frozen.
// Errors: InvalidArgument ("Unknown type ks.name", counters).
Result<CqlType> ParseFieldType(const std::string& text, const std::string& keyspace, const UserTypeLookup& user_types);

}  // namespace tessera::cql
