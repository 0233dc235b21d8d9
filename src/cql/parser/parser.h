// The CQL parser: one statement of text -> a RawStatement.
//
// Hand-written recursive descent over the lexer's tokens, covering the
// statements of the CQL reference that Tessera serves: SELECT (JSON,
// DISTINCT, selectors with aliases, count(*), WRITETIME, TTL, function
// calls, CAST), INSERT (VALUES, JSON, IF NOT EXISTS, USING), UPDATE
// (collection and counter operations, IF), DELETE (columns, elements,
// USING TIMESTAMP, IF), BATCH (LOGGED, UNLOGGED, COUNTER), CREATE / ALTER /
// DROP KEYSPACE and TABLE, TRUNCATE, USE. A trailing ';' is allowed.
//
// Errors: SyntaxError "line L:C <what>" at the first token that does not
// fit, in the spirit of Cassandra's "line 1:7 no viable alternative at input".
//
// Thread safety: pure function.
#pragma once

#include <string_view>

#include "common/status.h"
#include "cql/parser/raw_statements.h"

namespace tessera::cql {

Result<ParsedStatement> ParseStatement(std::string_view cql);

}  // namespace tessera::cql
