// CQL literals -> typed values, as Cassandra's Constants / Lists / Sets /
// Maps / Tuples terms convert them for a receiver of a known type.
//
// Accepted forms per type (the CQL reference, "Data types"):
//  - tinyint .. bigint, varint, counter: integer literals (range-checked);
//  - float, double: integer or float literals, NaN, Infinity, -Infinity;
//  - decimal: integer or float literals (exact: 1.50 keeps scale 2);
//  - text, ascii: string literals (ascii: bytes <= 0x7F);
//  - blob: 0x... literals; boolean: true / false;
//  - timestamp: an integer (milliseconds since the epoch) or a string
//    'yyyy-mm-dd[( |T)HH:MM[:SS[.fff]]][Z|(+|-)HH[:]MM]' (UTC when no zone);
//  - date: 'yyyy-mm-dd' or an integer (raw days, 2^31 = 1970-01-01);
//  - time: 'HH:MM:SS[.fffffffff]' or an integer (nanoseconds since midnight);
//  - uuid, timeuuid: UUID literals (timeuuid: version 1);
//  - inet: an IPv4 or IPv6 string; duration: 1h30m, P1Y2M3DT4H, -2d, ...;
//  - list, set, map, tuple: [..], {..}, {k: v}, (..) of the element types;
//    `{}` is an empty set or map.
// null gives a null Value. Bind markers and function calls are the caller's
// (the executor binds markers and evaluates now(), uuid(), ...).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "common/status.h"
#include "cql/parser/raw_statements.h"
#include "types/cql_type.h"
#include "types/value.h"

namespace tessera::cql {

// Errors: InvalidArgument in Cassandra's words, e.g.
//   Invalid STRING constant (abc) for "k" of type int
// `receiver` is the column (or bind variable) name used in the message.
Result<Value> LiteralToValue(const Term& term, const CqlType& type, const std::string& receiver);

// A user type literal {field: v, ...} as the tuple literal of its fields in
// the type's order (fields not named are null). REQUIRES: type is a user type.
// Errors: InvalidArgument as Cassandra words them ("Unknown field 'f' in
// value of user defined type address", "Invalid user type literal for ...").
Result<Term> UserTypeLiteralAsTuple(const Term& term, const CqlType& type, const std::string& receiver);

// Parses a timestamp string as above. Returns milliseconds since the epoch.
Result<int64_t> ParseTimestampString(std::string_view text);
// Parses a duration literal (1h30m, P1DT2H, P2W, -3d). Returns months, days, nanoseconds.
Result<Duration> ParseDurationLiteral(std::string_view text);

}  // namespace tessera::cql
