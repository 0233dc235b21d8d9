// Typed ordering of CQL values, as Cassandra's comparators define it
// (org.apache.cassandra.db.marshal.*Type.compare):
//  - integers, timestamp, time: numeric; date: unsigned days;
//  - float/double: Java Float/Double.compare (-0.0 < 0.0, NaN above +inf);
//  - text, ascii, blob, inet: unsigned lexicographic bytes, shorter first;
//  - varint: numeric; decimal: numeric, ties broken by scale (1.0 < 1.00)
//    so that distinct serializations never compare equal;
//  - uuid: version, then (version 1) timestamp, then unsigned bytes;
//  - timeuuid: timestamp, then the low 8 bytes as signed bytes;
//  - boolean: false < true;
//  - frozen list/set/map: element by element, then shorter first
//    (sets and maps compare their elements sorted, duplicates counted once);
//  - tuple: component by component, null first.
// This is the definition the order-preserving key encoding (keys/) must match.
//
// Thread safety: pure function.
#pragma once

#include "types/cql_type.h"
#include "types/value.h"

namespace tessera {

// Returns <0, 0 or >0. REQUIRES: both values are valid for `type` (see
// Serialize). Null sorts before every value. Durations (not keyable, no
// order in Cassandra) compare field by field (months, days, nanoseconds):
// equality is exact, the order is only a consistent one for IN and =.
int CompareValues(const CqlType& type, const Value& a, const Value& b);

// True if the type is, or contains, duration (Cassandra's
// AbstractType.referencesDuration): such values have no order, so slice
// restrictions and slice conditions on them are refused.
bool ReferencesDuration(const CqlType& type);

// The 60-bit timestamp of a version-1 UUID (time_hi without the version
// nibble, time_mid, time_low), by which Cassandra orders time-based UUIDs.
// REQUIRES: u is 16 bytes.
uint64_t UuidTimestamp(std::string_view u);

// Numeric comparison of two varints (two's-complement big-endian, minimal).
int CompareVarints(std::string_view a, std::string_view b);

}  // namespace tessera
