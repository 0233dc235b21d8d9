// Normalised decimal form used to order decimals (value_compare) and to
// encode them order-preservingly (keys/key_encoding): value =
// sign * 0.d1d2...dn * 10^exponent, digits without trailing zeros.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "types/value.h"

namespace tessera {

struct DecimalDigits {
  int sign = 0;           // -1, 0 or +1
  int64_t exponent = 0;   // meaningless when sign == 0
  std::string digits;     // ASCII '0'..'9', first digit non-zero, no trailing zeros; empty when zero
};

// REQUIRES: d.unscaled is a minimal two's-complement varint.
DecimalDigits ToDecimalDigits(const Decimal& d);

// Inverse of ToDecimalDigits for a given scale. Returns false when the digits
// cannot be represented with that scale (exponent - digits + scale < 0).
bool FromDecimalDigits(const DecimalDigits& n, int32_t scale, Decimal* out);

// Two's-complement negation of a big-endian byte string, in place.
void NegateTwosComplement(std::string* bytes);

// Varint (two's-complement big-endian, minimal) <-> sign and decimal magnitude.
void VarintToDecimalString(std::string_view varint, bool* negative, std::string* magnitude);
std::string DecimalStringToVarint(bool negative, std::string_view magnitude);

}  // namespace tessera
