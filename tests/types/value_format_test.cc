// How a decimal prints (types/value_format.h): java.math.BigDecimal's
// toString, as Cassandra shows it; an extreme scale stays short (the
// executor fuzzer once made SELECT JSON build a string of 2^31 zeros).
#include "types/value_format.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

// The v4 serialization of a decimal: 4-byte big-endian scale, then the
// unscaled value as a two's-complement varint.
std::string DecimalBytes(int32_t scale, std::string unscaled) {
  const auto u = static_cast<uint32_t>(scale);
  std::string out = {static_cast<char>(u >> 24), static_cast<char>(u >> 16), static_cast<char>(u >> 8),
                     static_cast<char>(u)};
  return out + unscaled;
}

TEST(ValueFormatTest, DecimalsPrintAsBigDecimalDoes) {
  const CqlType decimal = CqlType::Scalar(TypeKind::kDecimal);
  struct Case {
    int32_t scale;
    std::string unscaled;
    const char* text;
  };
  const Case cases[] = {
      {2, std::string("\x00\x96", 2), "1.50"},  // 150: the scale keeps the trailing zero
      {0, "\x03\xe8", "1000"},
      {0, "\xfb", "-5"},
      {2, std::string(1, '\0'), "0.00"},
      {7, "\x0a", "0.0000010"},  // adjusted exponent -6: still plain
      {7, "\x01", "1E-7"},
      {-3, "\x01", "1E+3"},  // a negative scale: scientific
      {-2, "\x7b", "1.23E+4"},
      {2147483647, "\x01", "1E-2147483647"},
      {-2147483648, "\xff", "-1E+2147483648"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatValue(decimal, DecimalBytes(c.scale, c.unscaled)), c.text) << c.scale;
  }
}

}  // namespace
}  // namespace tessera
