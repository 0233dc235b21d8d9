// UUIDs as 16 bytes (RFC 4122 byte order, as CQL serializes them): random
// version-4 uuids for identities (table ids, host ids), and the canonical
// text form "8-4-4-4-12" in lower-case hex.
//
// Thread safety: reentrant (RandomUuidV4 keeps one generator per thread).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

// A random version-4, variant-1 uuid (16 bytes).
std::string RandomUuidV4();

// 16 bytes -> "8-4-4-4-12" lower-case hex. REQUIRES: bytes.size() == 16.
std::string UuidText(std::string_view bytes);

// "8-4-4-4-12" hex text (either case) -> 16 bytes. InvalidArgument for anything else.
Result<std::string> UuidFromText(std::string_view text);

}  // namespace tessera
