// Value <-> bytes in the CQL native protocol v4 formats (§6 "Data Type
// Serialization Formats"). These byte formats are FROZEN ON THE WIRE and are
// also what Tessera stores in cells.
//
// Collections use the v4 layout: [int n] then n [bytes] elements (§6.4, §6.6,
// §6.9; map entries are key then value); tuples are a [bytes] per component,
// length -1 for null (§6.16).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "types/cql_type.h"
#include "types/value.h"

namespace tessera {

// Appends the serialized form of `value` (never null; nulls are the caller's
// [bytes] length -1) to *out.
// Errors: InvalidArgument when the value does not fit the type (wrong
// alternative, integer out of range, uuid not 16 bytes, timeuuid not
// version 1, inet not 4/16 bytes, ascii byte > 0x7F, text not UTF-8, time
// outside a day, duration with mixed signs, null element in a collection).
Status Serialize(const CqlType& type, const Value& value, std::string* out);

// Parses a serialized value of `type`. Sets and maps keep the wire order.
// Errors: InvalidArgument on a malformed or truncated input (the message
// names the type and the byte offset).
Result<Value> Deserialize(const CqlType& type, std::string_view bytes);

// Validates that `bytes` is a well-formed serialization of `type` without
// building a Value. Same errors as Deserialize.
Status ValidateSerialized(const CqlType& type, std::string_view bytes);

// Protocol "vint" (§3, unsigned variable length; signed ones zig-zag encoded)
// as used by duration.
void PutProtocolVint(std::string* out, int64_t v);

// Component `index` of a serialized tuple or user type value ([bytes] per
// component, trailing ones omitted); nullopt when it is null, omitted, or the
// bytes are cut short.
std::optional<std::string> SerializedComponent(std::string_view value, size_t index);

}  // namespace tessera
