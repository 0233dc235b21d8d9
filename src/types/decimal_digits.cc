#include "types/decimal_digits.h"

#include <algorithm>
#include <vector>

namespace tessera {
void NegateTwosComplement(std::string* b) {
  for (auto& c : *b) c = static_cast<char>(~static_cast<unsigned char>(c));
  for (size_t i = b->size(); i-- > 0;) {
    auto v = static_cast<unsigned char>((*b)[i]) + 1;
    (*b)[i] = static_cast<char>(v & 0xFF);
    if (v <= 0xFF) break;
  }
}

void VarintToDecimalString(std::string_view varint, bool* negative, std::string* magnitude) {
  std::string mag(varint);
  *negative = !mag.empty() && (mag[0] & 0x80);
  if (*negative) NegateTwosComplement(&mag);
  std::vector<unsigned> limbs(mag.begin(), mag.end());
  for (auto& l : limbs) l &= 0xFF;
  std::string digits;
  // Repeated division by 10 of the base-256 number.
  while (std::any_of(limbs.begin(), limbs.end(), [](unsigned l) { return l != 0; })) {
    unsigned rem = 0;
    for (auto& l : limbs) {
      unsigned cur = rem * 256 + l;
      l = cur / 10;
      rem = cur % 10;
    }
    digits.push_back(static_cast<char>('0' + rem));
  }
  if (digits.empty()) digits = "0";
  std::reverse(digits.begin(), digits.end());
  *magnitude = digits;
}

std::string DecimalStringToVarint(bool negative, std::string_view magnitude) {
  std::vector<unsigned> limbs;  // base-256, big-endian
  for (char ch : magnitude) {
    unsigned carry = static_cast<unsigned>(ch - '0');
    for (size_t i = limbs.size(); i-- > 0;) {
      unsigned cur = limbs[i] * 10 + carry;
      limbs[i] = cur & 0xFF;
      carry = cur >> 8;
    }
    while (carry) {
      limbs.insert(limbs.begin(), carry & 0xFF);
      carry >>= 8;
    }
  }
  std::string b;
  for (unsigned l : limbs) b.push_back(static_cast<char>(l));
  while (!b.empty() && b[0] == 0) b.erase(b.begin());
  // Room for the sign bit.
  if (b.empty() || (static_cast<unsigned char>(b[0]) & 0x80)) b.insert(b.begin(), '\0');
  if (negative) {
    NegateTwosComplement(&b);
    // Minimality: drop a redundant leading 0xFF.
    while (b.size() > 1 && static_cast<unsigned char>(b[0]) == 0xFF && (b[1] & 0x80)) b.erase(b.begin());
  }
  return b;
}

DecimalDigits ToDecimalDigits(const Decimal& d) {
  DecimalDigits n;
  bool negative;
  std::string mag;
  VarintToDecimalString(d.unscaled, &negative, &mag);
  if (mag == "0") return n;
  size_t stripped = 0;
  while (mag.size() > 1 && mag.back() == '0') {
    mag.pop_back();
    ++stripped;
  }
  n.sign = negative ? -1 : 1;
  n.exponent = static_cast<int64_t>(mag.size() + stripped) - d.scale;
  n.digits = std::move(mag);
  return n;
}

bool FromDecimalDigits(const DecimalDigits& n, int32_t scale, Decimal* out) {
  out->scale = scale;
  if (n.sign == 0) {
    out->unscaled = std::string(1, '\0');
    return true;
  }
  // 128-bit: the exponent comes from stored bytes and may be anything.
  __int128 zeros = __int128{n.exponent} - static_cast<__int128>(n.digits.size()) + scale;
  if (zeros < 0 || zeros > (1 << 20)) return false;
  std::string mag = n.digits + std::string(static_cast<size_t>(zeros), '0');
  out->unscaled = DecimalStringToVarint(n.sign < 0, mag);
  return true;
}

}  // namespace tessera
