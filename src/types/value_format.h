// FormatValue: a v4-serialized value as cqlsh displays it — what `tessera
// shell` prints in result tables:
//   text as is; numbers in decimal (floats with up to 6/12 significant
//   digits, NaN, Infinity); booleans True/False; timestamps
//   '2014-02-14 14:30:00.000000+0000'; dates 2014-02-14; times
//   14:30:00.000000000; UUIDs 8-4-4-4-12; inet dotted or colon form; blobs
//   0x...; durations 1h30m; collections [..], {..}, {k: v}; tuples (..);
//   strings inside collections quoted 'like this'.
// A value that does not deserialize is shown as 0x hex.
//
// Thread safety: pure.
#pragma once

#include <string>
#include <string_view>

#include "types/cql_type.h"

namespace tessera {

std::string FormatValue(const CqlType& type, std::string_view bytes);

}  // namespace tessera
