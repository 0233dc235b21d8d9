#include "types/value_format.h"

#include <arpa/inet.h>

#include <cmath>
#include <cstdio>
#include <ctime>

#include "common/bytes.h"
#include "common/uuid.h"
#include "types/decimal_digits.h"
#include "types/schema.h"
#include "types/serialization.h"

namespace tessera {
namespace {

std::string Float(double v, int digits) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string Timestamp(int64_t millis) {
  const int64_t secs = millis >= 0 ? millis / 1000 : -((-millis + 999) / 1000);
  const int64_t rem = millis - secs * 1000;
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%03lld000+0000", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(rem));
  return buf;
}

std::string Date(int64_t raw) {
  const int64_t days = raw - (int64_t{1} << 31);  // dates are centred on the epoch
  std::time_t t = static_cast<std::time_t>(days * 86400);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  return buf;
}

std::string Time(int64_t nanos) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld.%09lld", static_cast<long long>(nanos / 3'600'000'000'000),
                static_cast<long long>(nanos / 60'000'000'000 % 60), static_cast<long long>(nanos / 1'000'000'000 % 60),
                static_cast<long long>(nanos % 1'000'000'000));
  return buf;
}

std::string Inet(std::string_view b) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(b.size() == 4 ? AF_INET : AF_INET6, b.data(), buf, sizeof buf);
  return buf;
}

// java.math.BigDecimal.toString, as Cassandra prints a decimal: plain
// notation while the scale is not negative and the adjusted exponent is at
// least -6, else scientific ("1.5E-7", "1E+3"), so that an extreme scale
// never expands into billions of zeros.
std::string Decimal(const Value& v) {
  const tessera::Decimal& d = v.as_decimal();
  bool negative = false;
  std::string coeff;
  VarintToDecimalString(d.unscaled, &negative, &coeff);
  std::string out = negative ? "-" : "";
  const int64_t n = static_cast<int64_t>(coeff.size());
  const int64_t scale = d.scale;
  const int64_t adjusted = n - 1 - scale;
  if (scale >= 0 && adjusted >= -6) {
    if (scale == 0) {
      out += coeff;
    } else if (n > scale) {
      out += coeff.substr(0, static_cast<size_t>(n - scale)) + "." + coeff.substr(static_cast<size_t>(n - scale));
    } else {  // at most 5 leading zeros (adjusted >= -6)
      out += "0." + std::string(static_cast<size_t>(scale - n), '0') + coeff;
    }
    return out;
  }
  out += coeff.substr(0, 1);
  if (n > 1) out += "." + coeff.substr(1);
  if (adjusted != 0) out += std::string("E") + (adjusted > 0 ? "+" : "") + std::to_string(adjusted);
  return out;
}

std::string Duration(const tessera::Duration& d) {
  std::string out;
  auto part = [&](int64_t n, const char* unit) {
    if (n != 0) out += std::to_string(n) + unit;
  };
  const bool negative = d.months < 0 || d.days < 0 || d.nanoseconds < 0;
  part(std::abs(d.months) / 12, "y");
  part(std::abs(d.months) % 12, "mo");
  part(std::abs(d.days), "d");
  int64_t ns = std::abs(d.nanoseconds);
  part(ns / 3'600'000'000'000, "h");
  part(ns / 60'000'000'000 % 60, "m");
  part(ns / 1'000'000'000 % 60, "s");
  part(ns / 1'000'000 % 1000, "ms");
  part(ns / 1000 % 1000, "us");
  part(ns % 1000, "ns");
  if (out.empty()) out = "0s";
  return negative ? "-" + out : out;
}

std::string Format(const CqlType& type, const Value& v, bool nested);

std::string Element(const CqlType& type, const Value& v) {
  if (v.is_null()) return "null";
  return Format(type, v, /*nested=*/true);
}

std::string Format(const CqlType& type, const Value& v, bool nested) {
  switch (type.kind()) {
    case TypeKind::kText: case TypeKind::kAscii: {
      if (!nested) return v.as_bytes();
      std::string out = "'";
      for (char c : v.as_bytes()) out += c == '\'' ? std::string("''") : std::string(1, c);
      return out + "'";
    }
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kCounter:
      return std::to_string(v.as_int());
    case TypeKind::kVarint: {
      bool negative = false;
      std::string magnitude;
      VarintToDecimalString(v.as_bytes(), &negative, &magnitude);
      return (negative ? "-" : "") + magnitude;
    }
    case TypeKind::kDecimal: return Decimal(v);
    case TypeKind::kFloat: return Float(v.as_float(), 6);
    case TypeKind::kDouble: return Float(v.as_double(), 12);
    case TypeKind::kBoolean: return v.as_bool() ? "True" : "False";
    case TypeKind::kTimestamp: return Timestamp(v.as_int());
    case TypeKind::kDate: return Date(v.as_int());
    case TypeKind::kTime: return Time(v.as_int());
    case TypeKind::kUuid: case TypeKind::kTimeuuid: return UuidText(v.as_bytes());
    case TypeKind::kInet: return Inet(v.as_bytes());
    case TypeKind::kBlob: return "0x" + ToHex(v.as_bytes());
    case TypeKind::kDuration: return Duration(v.as_duration());
    case TypeKind::kList: case TypeKind::kSet: case TypeKind::kVector: {
      std::string out = type.kind() == TypeKind::kSet ? "{" : "[";
      bool first = true;
      for (const auto& e : v.as_elements()) {
        out += (first ? "" : ", ") + Element(type.params()[0], e);
        first = false;
      }
      return out + (type.kind() == TypeKind::kSet ? "}" : "]");
    }
    case TypeKind::kMap: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, e] : v.as_entries()) {
        out += (first ? "" : ", ") + Element(type.params()[0], k) + ": " + Element(type.params()[1], e);
        first = false;
      }
      return out + "}";
    }
    case TypeKind::kTuple: {
      std::string out = "(";
      const auto& items = v.as_elements();
      for (size_t i = 0; i < items.size() && i < type.params().size(); ++i) {
        out += (i ? ", " : "") + Element(type.params()[i], items[i]);
      }
      return out + ")";
    }
    case TypeKind::kUdt: {  // cqlsh's form: {street: 'x', zip: null}
      std::string out = "{";
      const auto& items = v.as_elements();
      for (size_t i = 0; i < type.params().size(); ++i) {
        const Value& field = i < items.size() ? items[i] : Value();
        out += (i ? ", " : "") + QuoteIdentifier(type.field_names()[i]) + ": " + (field.is_null() ? "null" : Element(type.params()[i], field));
      }
      return out + "}";
    }
    default:
      return "?";
  }
}

}  // namespace

std::string FormatValue(const CqlType& type, std::string_view bytes) {
  auto v = Deserialize(type, bytes);
  if (!v.ok()) return "0x" + ToHex(bytes);
  return Format(type, *v, /*nested=*/false);
}

}  // namespace tessera
