// MurmurHash3 x64 128-bit, exactly as Apache Cassandra's MurmurHash.hash3_x64_128
// (seed 0), including its quirk: tail bytes are read as *signed* Java bytes and
// sign-extended before shifting. That quirk makes the result differ from the
// reference MurmurHash3 for keys whose length is not a multiple of 16 and that
// contain bytes >= 0x80; it is what Murmur3Partitioner tokens depend on, so it
// is FROZEN (tokens are persisted in storage keys and seen by drivers).
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

struct Murmur3Hash128 {
  int64_t h1;
  int64_t h2;
};

Murmur3Hash128 CassandraMurmur3(std::string_view key, int64_t seed = 0);

}  // namespace tessera
