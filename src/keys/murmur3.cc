#include "keys/murmur3.h"

#include <cstring>

namespace tessera {
namespace {

inline uint64_t Rotl64(uint64_t v, int n) { return (v << n) | (v >> (64 - n)); }

inline uint64_t Fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

inline uint64_t LittleEndian64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A Java (signed) byte widened to long: sign-extended.
inline uint64_t SignedByte(const unsigned char* p, int i) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<signed char>(p[i])));
}

}  // namespace

Murmur3Hash128 CassandraMurmur3(std::string_view key, int64_t seed) {
  const auto* data = reinterpret_cast<const unsigned char*>(key.data());
  const size_t length = key.size();
  const size_t nblocks = length >> 4;
  uint64_t h1 = static_cast<uint64_t>(seed), h2 = static_cast<uint64_t>(seed);
  const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;

  for (size_t i = 0; i < nblocks; ++i) {
    uint64_t k1 = LittleEndian64(data + i * 16), k2 = LittleEndian64(data + i * 16 + 8);
    k1 *= c1; k1 = Rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    h1 = Rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
    k2 *= c2; k2 = Rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    h2 = Rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
  }

  const unsigned char* tail = data + nblocks * 16;
  uint64_t k1 = 0, k2 = 0;
  switch (length & 15) {
    case 15: k2 ^= SignedByte(tail, 14) << 48; [[fallthrough]];
    case 14: k2 ^= SignedByte(tail, 13) << 40; [[fallthrough]];
    case 13: k2 ^= SignedByte(tail, 12) << 32; [[fallthrough]];
    case 12: k2 ^= SignedByte(tail, 11) << 24; [[fallthrough]];
    case 11: k2 ^= SignedByte(tail, 10) << 16; [[fallthrough]];
    case 10: k2 ^= SignedByte(tail, 9) << 8; [[fallthrough]];
    case 9:
      k2 ^= SignedByte(tail, 8);
      k2 *= c2; k2 = Rotl64(k2, 33); k2 *= c1; h2 ^= k2;
      [[fallthrough]];
    case 8: k1 ^= SignedByte(tail, 7) << 56; [[fallthrough]];
    case 7: k1 ^= SignedByte(tail, 6) << 48; [[fallthrough]];
    case 6: k1 ^= SignedByte(tail, 5) << 40; [[fallthrough]];
    case 5: k1 ^= SignedByte(tail, 4) << 32; [[fallthrough]];
    case 4: k1 ^= SignedByte(tail, 3) << 24; [[fallthrough]];
    case 3: k1 ^= SignedByte(tail, 2) << 16; [[fallthrough]];
    case 2: k1 ^= SignedByte(tail, 1) << 8; [[fallthrough]];
    case 1:
      k1 ^= SignedByte(tail, 0);
      k1 *= c1; k1 = Rotl64(k1, 31); k1 *= c2; h1 ^= k1;
      break;
    default: break;
  }

  h1 ^= length; h2 ^= length;
  h1 += h2; h2 += h1;
  h1 = Fmix(h1); h2 = Fmix(h2);
  h1 += h2; h2 += h1;
  return {static_cast<int64_t>(h1), static_cast<int64_t>(h2)};
}

}  // namespace tessera
