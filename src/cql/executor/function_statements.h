// CREATE [OR REPLACE] FUNCTION / AGGREGATE [IF NOT EXISTS] and DROP FUNCTION
// / AGGREGATE [IF EXISTS] with user-defined functions enabled
// (--enable-user-defined-functions; cql/functions/user_functions.h), with
// Cassandra's validation and messages (CreateFunctionStatement,
// CreateAggregateStatement): LANGUAGE lua only (as ScyllaDB), argument names
// distinct, types Lua can take, a body that compiles; an aggregate's state
// function takes (STYPE, arguments...) and returns STYPE, its final
// function takes STYPE, INITCOND is a literal of STYPE. While they are
// disabled the executor refuses these statements itself, as Cassandra does.
//
// Thread safety: thread-safe (the Database is).
#pragma once

#include <string>

#include "common/status.h"
#include "cql/executor/schema_statements.h"
#include "cql/functions/user_functions.h"
#include "cql/parser/raw_statements.h"
#include "db/database.h"

namespace tessera::cql {

// The change is target FUNCTION or AGGREGATE with the argument types.
// Errors: InvalidArgument (Cassandra's words), AlreadyExists.
Result<SchemaOutcome> ExecuteFunctionStatement(Database& db, const UserFunctions& functions, const FunctionStatement& s,
                                               const std::string& current_keyspace);

}  // namespace tessera::cql
