// CQL values <-> JSON, as Cassandra 4.1's SELECT JSON, toJson(), INSERT JSON
// and fromJson() write and read them (the CQL reference, "JSON support";
// Cassandra's AbstractType.toJSONString / fromJSONObject per type).
//
// To JSON: text and ascii as JSON strings; tinyint .. bigint, varint,
// counter, decimal as numbers; float and double as numbers (shortest
// round-trip form; NaN and the infinities as the strings "NaN",
// "Infinity", "-Infinity"); boolean as true / false; timestamps as
// "yyyy-mm-dd HH:MM:SS.fffZ"; dates "yyyy-mm-dd"; times
// "HH:MM:SS.fffffffff"; uuid, timeuuid, inet, duration and blob ("0x..")
// as strings; lists, sets and tuples as arrays; maps as objects (a key
// that is not a string is written as its JSON in a string); null as null.
// Arrays and objects separate items with ", " and keys with ": ".
//
// From JSON: the same forms, and what Cassandra also accepts — numbers
// given as strings, booleans as "true" / "false", timestamps as integers
// (milliseconds), map keys of non-string types as their JSON text.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "cql/parser/raw_statements.h"
#include "types/cql_type.h"

namespace tessera::cql {

// JSON text of a serialized value (nullopt: null).
std::string ValueToJson(const CqlType& type, const std::optional<std::string>& bytes);

// A column name as a key of SELECT JSON's object: as is when it is a plain
// lower-case identifier or a function's result (ttl(b)), else in double
// quotes (ColumnIdentifier.maybeQuote).
std::string JsonColumnKey(const std::string& name);

// The members of a JSON object, in order: (name, member's JSON text).
// Errors: InvalidArgument "Could not decode JSON string as a map: ..." for
// text that is not a JSON object.
Result<std::vector<std::pair<std::string, std::string>>> ParseJsonObject(const std::string& text);

// The CQL literal a JSON value means for a receiver of `type`, ready for
// the literal binder (which range-checks and reports in Cassandra's words).
// Errors: InvalidArgument "Error decoding JSON value for <receiver>: ...".
Result<Term> JsonToTerm(const std::string& json_text, const CqlType& type, const std::string& receiver);

}  // namespace tessera::cql
