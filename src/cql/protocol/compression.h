// Frame body compression negotiated in STARTUP (native protocol v4 §5):
//  - "lz4":    [int] uncompressed length (big-endian), then an LZ4 block;
//  - "snappy": a raw Snappy buffer.
// Uses Debian's liblz4 and libsnappy.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::cql {

enum class Compression : uint8_t { kNone, kLz4, kSnappy };

// "lz4" / "snappy" (case-insensitive) -> algorithm; InvalidArgument otherwise.
Result<Compression> ParseCompression(std::string_view name);

Status Compress(Compression algorithm, std::string_view in, std::string* out);
// Errors: InvalidArgument on a corrupt body or an uncompressed length over
// `max_size` bytes (never allocates more than that).
Status Decompress(Compression algorithm, std::string_view in, size_t max_size, std::string* out);

}  // namespace tessera::cql
