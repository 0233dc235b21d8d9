// CAST(selector AS type): Cassandra 4.1's conversions (CastFcts) between
// native types, as a selector:
//  - between the numeric types tinyint, smallint, int, bigint, counter,
//    varint, float, double and decimal, as Java's Number conversions do
//    (a wider integer wraps into a narrower one, a floating-point value
//    truncates toward zero and saturates);
//  - from every native type to text and ascii (its string form: numbers in
//    decimal, timestamps as 2011-02-03T04:05:00.000Z, booleans true /
//    false, blobs as hex, the others as cqlsh shows them);
//  - timestamp <-> date, and timeuuid -> timestamp or date;
//  - a type to itself.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "types/cql_type.h"

namespace tessera::cql {

bool CastSupported(const CqlType& from, const CqlType& to);

// Milliseconds since the epoch of a timestamp, date (its midnight) or
// timeuuid cell; nullopt for another kind or a malformed cell.
std::optional<int64_t> MillisOf(TypeKind kind, const std::string& bytes);

// REQUIRES: CastSupported(from, to). `bytes` is a valid serialized `from`
// value; returns the serialized `to` value (nullopt: null).
std::optional<std::string> CastValue(const CqlType& from, const CqlType& to, const std::string& bytes);

}  // namespace tessera::cql
