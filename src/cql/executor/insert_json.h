// INSERT JSON: the INSERT ... VALUES a JSON object means (the CQL
// reference, "INSERT JSON"; Cassandra's Json.parseJson and
// JsonInsertStatement).
//
// Member names are column names as CQL identifiers: unquoted ones match
// case-insensitively ("Name" is column name), a name in escaped double
// quotes ("\"Name\"") matches exactly. Values convert by the column's type
// (cql/executor/json_values.h). Columns the object leaves out are set to
// null (DEFAULT NULL, the default) or left untouched (DEFAULT UNSET).
//
// Thread safety: pure.
#pragma once

#include "common/status.h"
#include "cql/executor/term_binder.h"
#include "cql/parser/raw_statements.h"
#include "types/schema.h"

namespace tessera::cql {

// REQUIRES: stmt.json is set. The JSON text is the statement's string
// literal or its bound value. Errors: InvalidArgument in Cassandra's words
// ("Got null for INSERT JSON values", "Could not decode JSON string as a
// map: ...", "JSON values map contains unrecognized column: x", "Error
// decoding JSON value for x: ...").
Result<InsertStatement> ExpandInsertJson(const TableSchema& table, const InsertStatement& stmt, const BindContext& bind);

}  // namespace tessera::cql
