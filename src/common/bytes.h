// Byte-level helpers shared by the codecs: fixed-width big- and little-endian
// integers, unsigned LEB128 varints, hex, and a bounds-checked reader.
//
// Bytes are held in std::string (the RocksDB and protocol convention).
// Thread safety: free functions are reentrant; a ByteReader is not shared.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera {

void PutBigEndian16(std::string* out, uint16_t v);
void PutBigEndian32(std::string* out, uint32_t v);
void PutBigEndian64(std::string* out, uint64_t v);
uint16_t GetBigEndian16(const char* p);
uint32_t GetBigEndian32(const char* p);
uint64_t GetBigEndian64(const char* p);
// `width` (1..8) low-order bytes of v, big-endian; and the inverse for
// 1..8 bytes (an empty input reads as 0).
void PutBigEndian(std::string* out, uint64_t v, int width);
uint64_t GetBigEndian(std::string_view bytes);

// Unsigned LEB128 (7 bits per byte, low group first). At most 10 bytes.
void PutVarint64(std::string* out, uint64_t v);

// The offset of the first byte of `s` that does not start a well-formed
// UTF-8 sequence (overlong forms, surrogates and code points past U+10FFFF
// are ill-formed, RFC 3629), or std::string_view::npos when all of it is
// UTF-8.
size_t FirstInvalidUtf8(std::string_view s);
inline bool IsValidUtf8(std::string_view s) { return FirstInvalidUtf8(s) == std::string_view::npos; }
// The longest prefix of `s` of at most `max_bytes` bytes that does not end
// inside a UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);

// Spanner's BIT_REVERSE: the 64 bits of `v` in reverse order; with
// `preserve_sign`, the sign bit stays and the other 63 are reversed (so a
// positive sequence stays positive: bit_reversed_positive). Consecutive
// values land far apart in key order.
inline int64_t BitReverse(int64_t v, bool preserve_sign) {
  uint64_t x = static_cast<uint64_t>(v);
  const uint64_t sign = x & (uint64_t{1} << 63);
  if (preserve_sign) x &= ~sign;
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i) r |= ((x >> i) & 1) << (63 - i);
  if (preserve_sign) r = (r >> 1) | sign;
  return static_cast<int64_t>(r);
}

// ASCII case folding (CQL keywords, identifiers and function names; other bytes are kept).
std::string AsciiLower(std::string s);
std::string AsciiUpper(std::string s);

// The inet value (4 or 16 bytes, network order, as CQL serializes it) of an
// IPv4 or IPv6 address text; empty for anything else.
std::string InetAddressBytes(const std::string& address);

// Lowercase hex of `bytes`; FromHex returns false on odd length or a non-hex digit.
std::string ToHex(std::string_view bytes);
bool FromHex(std::string_view hex, std::string* out);

// Smallest byte string greater than every string that starts with `prefix`.
// Returns false (and leaves *out unspecified) when none exists (prefix is
// empty or all 0xFF): the range above `prefix` is then unbounded.
bool PrefixSuccessor(std::string_view prefix, std::string* out);

// Reads from a byte span with bounds checks. Every getter returns false when
// the input is too short, leaving the position unspecified.
class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}
  bool ReadByte(uint8_t* v);
  bool ReadBigEndian32(uint32_t* v);
  bool ReadBigEndian64(uint64_t* v);
  bool ReadVarint64(uint64_t* v);
  bool ReadBytes(size_t n, std::string_view* v);
  // A varint length, then that many bytes.
  bool ReadLengthPrefixed(std::string* v);
  bool empty() const { return pos_ >= data_.size(); }
  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  std::string_view rest() const { return data_.substr(pos_); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace tessera
