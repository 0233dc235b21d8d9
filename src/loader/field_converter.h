// FieldConverter: one text field of an input record -> the v4-serialized
// value of a column, with the same rules as a CQL literal of that type
// (cql/executor/literals.h), so that a field loads exactly as the equivalent
// INSERT would:
//  - integers (tinyint..bigint, varint, counter): decimal text;
//  - float, double, decimal: decimal or scientific text (NaN, Infinity);
//  - boolean: true/false (any case), also 1/0, yes/no;
//  - text, ascii, varchar, inet, date, time, duration: the text itself;
//  - timestamp: 'yyyy-mm-dd[ hh:mm[:ss[.fff]]][zone]', or an integer in
//    `timestamp_unit` (seconds, milliseconds or microseconds since the epoch);
//  - uuid, timeuuid: 8-4-4-4-12 hex; blob: hex with or without 0x.
// An empty field is null, except for text types, where it is ''.
// Collections, tuples and other composite types are not loaded.
//
// Errors: InvalidArgument in Cassandra's words, naming the column.
// Thread safety: pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "types/cql_type.h"

namespace tessera::loader {

enum class TimestampUnit { kSeconds, kMilliseconds, kMicroseconds };

// nullopt: null.
Result<std::optional<std::string>> ConvertField(std::string_view text, const CqlType& type, const std::string& column,
                                                TimestampUnit unit = TimestampUnit::kMilliseconds);

}  // namespace tessera::loader
