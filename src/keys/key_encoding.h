// Order-preserving ("memcomparable") encoding of typed key components.
//
// For every keyable CqlType, Encode maps a serialized value (native protocol
// v4 §6) to bytes such that, for values a and b of that type,
//     memcmp-order(Encode(a), Encode(b)) == CompareValues(type, a, b)
// and no encoding is a proper prefix of another (self-delimiting). The
// second property makes tuples of components encode as plain concatenation,
// and makes a DESC component the bitwise complement of its ASC encoding.
// The format of each type is written down in ARCHITECTURE.md ("Key
// encoding") and is FROZEN ON DISK.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "types/cql_type.h"
#include "types/schema.h"

namespace tessera {

// Appends the encoding of `serialized` (a value of `type`) to *out.
// Errors: InvalidArgument if the type is not keyable or the bytes are not a
// valid value of the type (empty values included).
Status EncodeKeyComponent(const CqlType& type, std::string_view serialized, SortOrder order,
                          std::string* out);

// Decodes one component from the front of *in (advancing it past the
// component) and appends its serialized value to *serialized (sets and maps
// come out sorted). Errors: Corruption on malformed input, never reading
// past the end of *in.
Status DecodeKeyComponent(const CqlType& type, SortOrder order, std::string_view* in,
                          std::string* serialized);

}  // namespace tessera
