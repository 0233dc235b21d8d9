#include "cql/executor/cast.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "common/bytes.h"
#include "common/time_uuid.h"
#include "cql/executor/literals.h"
#include "types/serialization.h"
#include "types/value_compare.h"
#include "types/value_format.h"

namespace tessera::cql {
namespace {

bool IsInteger(TypeKind k) {
  return k == TypeKind::kTinyint || k == TypeKind::kSmallint || k == TypeKind::kInt || k == TypeKind::kBigint ||
         k == TypeKind::kCounter;
}

bool IsNumber(TypeKind k) {
  return IsInteger(k) || k == TypeKind::kVarint || k == TypeKind::kFloat || k == TypeKind::kDouble ||
         k == TypeKind::kDecimal;
}

bool IsTime(TypeKind k) { return k == TypeKind::kTimestamp || k == TypeKind::kDate || k == TypeKind::kTimeuuid; }

int Bits(TypeKind k) {
  switch (k) {
    case TypeKind::kTinyint: return 8;
    case TypeKind::kSmallint: return 16;
    case TypeKind::kInt: return 32;
    default: return 64;
  }
}

// Java's narrowing: keep the low bits, as signed.
int64_t Wrap(int64_t v, int bits) {
  if (bits == 64) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t low = static_cast<uint64_t>(v) & mask;
  if (low & (uint64_t{1} << (bits - 1))) low |= ~mask;
  return static_cast<int64_t>(low);
}

// Java's (long) of a double: truncation toward zero, saturating, NaN -> 0.
int64_t Truncate(long double d) {
  if (std::isnan(d)) return 0;
  if (d >= static_cast<long double>(std::numeric_limits<int64_t>::max())) return std::numeric_limits<int64_t>::max();
  if (d <= static_cast<long double>(std::numeric_limits<int64_t>::min())) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

std::string Shortest(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, r.ptr);
}

std::optional<std::string> FromLiteral(Term::Kind kind, const std::string& text, const CqlType& to) {
  Term t;
  t.kind = kind;
  t.text = text;
  auto v = LiteralToValue(t, to, "cast");
  std::string out;
  if (!v.ok() || !Serialize(to, *v, &out).ok()) return std::nullopt;
  return out;
}

std::optional<std::string> Number(const CqlType& from, const CqlType& to, const Value& v, const std::string& bytes) {
  const TypeKind f = from.kind(), t = to.kind();
  // The source as an exact integer (when it is one), a long double, and text.
  std::optional<int64_t> integer;
  long double real = 0;
  std::string text;
  if (IsInteger(f)) {
    integer = v.as_int();
    real = static_cast<long double>(*integer);
    text = std::to_string(*integer);
  } else if (f == TypeKind::kFloat || f == TypeKind::kDouble) {
    const double d = f == TypeKind::kFloat ? static_cast<double>(v.as_float()) : v.as_double();
    real = d;
    text = f == TypeKind::kFloat ? [&] { char b[64]; auto r = std::to_chars(b, b + 64, v.as_float()); return std::string(b, r.ptr); }()
                                 : Shortest(d);
  } else {  // varint, decimal
    text = FormatValue(from, bytes);
    real = std::strtold(text.c_str(), nullptr);
  }
  if (IsInteger(t)) {
    const int64_t whole = integer ? *integer : Truncate(real);
    return FromLiteral(Term::Kind::kInteger, std::to_string(Wrap(whole, Bits(t))), to);
  }
  if (t == TypeKind::kFloat || t == TypeKind::kDouble) {
    if (std::isnan(real)) return FromLiteral(Term::Kind::kFloat, "NaN", to);
    if (std::isinf(real)) return FromLiteral(Term::Kind::kFloat, real > 0 ? "Infinity" : "-Infinity", to);
    std::string out;
    const Value as = t == TypeKind::kFloat ? Value::Float(static_cast<float>(real)) : Value::Double(static_cast<double>(real));
    if (!Serialize(to, as, &out).ok()) return std::nullopt;
    return out;
  }
  if (t == TypeKind::kVarint) {
    if (integer || f == TypeKind::kVarint) return FromLiteral(Term::Kind::kInteger, text, to);
    if (std::isnan(real) || std::isinf(real)) return std::nullopt;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.0Lf", std::trunc(real));
    return FromLiteral(Term::Kind::kInteger, buf, to);
  }
  // decimal
  if (std::isnan(real) || std::isinf(real)) return std::nullopt;
  return FromLiteral(integer || f == TypeKind::kVarint ? Term::Kind::kInteger : Term::Kind::kFloat, text, to);
}

std::string Text(const CqlType& from, const Value& v, const std::string& bytes) {
  switch (from.kind()) {
    case TypeKind::kText: case TypeKind::kAscii: return v.as_bytes();
    case TypeKind::kBoolean: return v.as_bool() ? "true" : "false";
    case TypeKind::kBlob: return ToHex(v.as_bytes());
    case TypeKind::kFloat: { char b[64]; auto r = std::to_chars(b, b + 64, v.as_float()); return std::string(b, r.ptr); }
    case TypeKind::kDouble: return Shortest(v.as_double());
    case TypeKind::kTimestamp: {  // cqlsh's '2011-02-03 04:05:00.000000+0000' -> ISO 8601 in milliseconds
      std::string shown = FormatValue(from, bytes);
      if (shown.size() >= 23) return shown.substr(0, 10) + "T" + shown.substr(11, 12) + "Z";
      return shown;
    }
    default: return FormatValue(from, bytes);
  }
}

}  // namespace

std::optional<int64_t> MillisOf(TypeKind kind, const std::string& bytes) {
  if (kind == TypeKind::kTimestamp && bytes.size() == 8) return static_cast<int64_t>(GetBigEndian64(bytes.data()));
  if (kind == TypeKind::kDate && bytes.size() == 4) {
    return (static_cast<int64_t>(GetBigEndian32(bytes.data())) - (int64_t{1} << 31)) * 86'400'000;
  }
  if (kind == TypeKind::kTimeuuid && bytes.size() == 16) {
    return (static_cast<int64_t>(UuidTimestamp(bytes)) - kGregorianOffset100ns) / 10'000;
  }
  return std::nullopt;
}

bool CastSupported(const CqlType& from, const CqlType& to) {
  const TypeKind f = from.kind(), t = to.kind();
  if (from == to) return true;
  if (from.IsCollection() || from.IsTupleLike() || to.IsCollection() || to.IsTupleLike()) return false;
  if (t == TypeKind::kText || t == TypeKind::kAscii) return true;
  if (IsNumber(f) && IsNumber(t)) return t != TypeKind::kCounter;
  if (IsTime(f) && (t == TypeKind::kTimestamp || t == TypeKind::kDate)) return true;
  return false;
}

std::optional<std::string> CastValue(const CqlType& from, const CqlType& to, const std::string& bytes) {
  if (from == to) return bytes;
  auto v = Deserialize(from, bytes);
  if (!v.ok() || v->is_null()) return std::nullopt;
  const TypeKind t = to.kind();
  if (t == TypeKind::kText || t == TypeKind::kAscii) {
    std::string out;
    if (!Serialize(to, Value::Bytes(Text(from, *v, bytes)), &out).ok()) return std::nullopt;
    return out;
  }
  if (IsNumber(from.kind())) return Number(from, to, *v, bytes);
  auto ms = MillisOf(from.kind(), bytes);
  if (!ms) return std::nullopt;
  std::string out;
  if (t == TypeKind::kTimestamp) {
    PutBigEndian64(&out, static_cast<uint64_t>(*ms));
  } else {  // date: the day of the instant, floored
    const int64_t days = *ms >= 0 ? *ms / 86'400'000 : -((-*ms + 86'399'999) / 86'400'000);
    PutBigEndian32(&out, static_cast<uint32_t>(days + (int64_t{1} << 31)));
  }
  return out;
}

}  // namespace tessera::cql
