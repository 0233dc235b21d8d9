#include "common/bytes.h"

#include <arpa/inet.h>

#include <cctype>

namespace tessera {

void PutBigEndian16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}

void PutBigEndian32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

void PutBigEndian64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint16_t GetBigEndian16(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>((u[0] << 8) | u[1]);
}

uint32_t GetBigEndian32(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

uint64_t GetBigEndian64(const char* p) {
  return (uint64_t{GetBigEndian32(p)} << 32) | GetBigEndian32(p + 4);
}

void PutBigEndian(std::string* out, uint64_t v, int width) {
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint64_t GetBigEndian(std::string_view bytes) {
  uint64_t v = 0;
  for (unsigned char c : bytes) v = (v << 8) | c;
  return v;
}

void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

std::string ToHex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xF]);
  }
  return out;
}

static int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool FromHex(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->clear();
  out->reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = HexValue(hex[i]), lo = HexValue(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>((hi << 4) | lo));
  }
  return true;
}

bool PrefixSuccessor(std::string_view prefix, std::string* out) {
  out->assign(prefix);
  while (!out->empty()) {
    auto last = static_cast<unsigned char>(out->back());
    if (last != 0xFF) {
      out->back() = static_cast<char>(last + 1);
      return true;
    }
    out->pop_back();
  }
  return false;
}

bool ByteReader::ReadByte(uint8_t* v) {
  if (remaining() < 1) return false;
  *v = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

bool ByteReader::ReadBigEndian32(uint32_t* v) {
  if (remaining() < 4) return false;
  *v = GetBigEndian32(data_.data() + pos_);
  pos_ += 4;
  return true;
}

bool ByteReader::ReadBigEndian64(uint64_t* v) {
  if (remaining() < 8) return false;
  *v = GetBigEndian64(data_.data() + pos_);
  pos_ += 8;
  return true;
}

bool ByteReader::ReadVarint64(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
    uint8_t b;
    if (!ReadByte(&b)) return false;
    result |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;  // more than 10 bytes: malformed
}

bool ByteReader::ReadBytes(size_t n, std::string_view* v) {
  if (remaining() < n) return false;
  *v = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool ByteReader::ReadLengthPrefixed(std::string* v) {
  uint64_t len;
  std::string_view b;
  if (!ReadVarint64(&len) || !ReadBytes(len, &b)) return false;
  v->assign(b);
  return true;
}

size_t FirstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
    else return i;
    if (i + n >= s.size()) return i;  // needs bytes i+1 .. i+n
    for (size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)) return i;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += n + 1;
  }
  return std::string_view::npos;
}

std::string_view Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t n = max_bytes;
  // Back up over continuation bytes to the start of the sequence the cut falls in.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string AsciiLower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string AsciiUpper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string InetAddressBytes(const std::string& address) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, address.c_str(), buf) == 1) return std::string(reinterpret_cast<char*>(buf), 4);
  if (inet_pton(AF_INET6, address.c_str(), buf) == 1) return std::string(reinterpret_cast<char*>(buf), 16);
  return {};
}

}  // namespace tessera
