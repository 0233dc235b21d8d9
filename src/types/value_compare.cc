#include "types/value_compare.h"

#include <algorithm>
#include <limits>
#include <cstring>
#include <string>

#include "types/decimal_digits.h"

namespace tessera {
namespace {

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareBytes(std::string_view a, std::string_view b) {
  int c = a.compare(b);  // std::char_traits<char>::compare is unsigned-byte memcmp
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Java's Float.compare / Double.compare via the canonical bit trick.
template <typename F, typename U>
int CompareFloating(F a, F b) {
  auto key = [](F f) {
    if (f != f) f = std::numeric_limits<F>::quiet_NaN();
    U bits;
    std::memcpy(&bits, &f, sizeof bits);
    constexpr U sign = U{1} << (sizeof(U) * 8 - 1);
    return (bits & sign) ? ~bits : (bits | sign);
  };
  return Cmp(key(a), key(b));
}

int CompareUuid(std::string_view a, std::string_view b) {
  int va = static_cast<unsigned char>(a[6]) >> 4, vb = static_cast<unsigned char>(b[6]) >> 4;
  if (va != vb) return Cmp(va, vb);
  if (va == 1) {
    int c = Cmp(UuidTimestamp(a), UuidTimestamp(b));
    if (c != 0) return c;
  }
  return CompareBytes(a, b);
}

int CompareTimeuuid(std::string_view a, std::string_view b) {
  int c = Cmp(UuidTimestamp(a), UuidTimestamp(b));
  if (c != 0) return c;
  for (int i = 8; i < 16; ++i) {
    c = Cmp(static_cast<signed char>(a[i]), static_cast<signed char>(b[i]));
    if (c != 0) return c;
  }
  return 0;
}

int CompareDecimals(const Decimal& a, const Decimal& b) {
  DecimalDigits da = ToDecimalDigits(a), db = ToDecimalDigits(b);
  if (da.sign != db.sign) return Cmp(da.sign, db.sign);
  int c = 0;
  if (da.sign != 0) {
    c = Cmp(da.exponent, db.exponent);
    if (c == 0) c = CompareBytes(da.digits, db.digits);
    if (da.sign < 0) c = -c;
  }
  if (c != 0) return c;
  return da.sign < 0 ? Cmp(b.scale, a.scale) : Cmp(a.scale, b.scale);
}

int CompareSequences(const CqlType& elem, const std::vector<Value>& a, const std::vector<Value>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    int c = CompareValues(elem, a[i], b[i]);
    if (c != 0) return c;
  }
  return Cmp(a.size(), b.size());
}

// A set's elements in order, each once (a set holds no duplicates).
std::vector<Value> SortedUnique(const CqlType& elem, std::vector<Value> v) {
  std::stable_sort(v.begin(), v.end(), [&](const Value& x, const Value& y) { return CompareValues(elem, x, y) < 0; });
  v.erase(std::unique(v.begin(), v.end(), [&](const Value& x, const Value& y) { return CompareValues(elem, x, y) == 0; }),
          v.end());
  return v;
}

}  // namespace

uint64_t UuidTimestamp(std::string_view u) {
  auto b = [&](int i) { return uint64_t{static_cast<unsigned char>(u[i])}; };
  return ((b(6) & 0x0F) << 56) | (b(7) << 48) | (b(4) << 40) | (b(5) << 32) | (b(0) << 24) |
         (b(1) << 16) | (b(2) << 8) | b(3);
}

int CompareVarints(std::string_view a, std::string_view b) {
  bool na = !a.empty() && (a[0] & 0x80), nb = !b.empty() && (b[0] & 0x80);
  if (na != nb) return na ? -1 : 1;
  // Same sign, minimal encodings: a longer encoding has the larger magnitude.
  if (a.size() != b.size()) return (a.size() < b.size()) != na ? -1 : 1;
  return CompareBytes(a, b);  // same length two's complement: unsigned byte order works for both signs
}

int CompareValues(const CqlType& type, const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return Cmp(!a.is_null(), !b.is_null());
  switch (type.kind()) {
    case TypeKind::kBoolean: return Cmp(a.as_bool(), b.as_bool());
    case TypeKind::kFloat: return CompareFloating<float, uint32_t>(a.as_float(), b.as_float());
    case TypeKind::kDouble: return CompareFloating<double, uint64_t>(a.as_double(), b.as_double());
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kCounter: case TypeKind::kTimestamp: case TypeKind::kTime: case TypeKind::kDate:
      return Cmp(a.as_int(), b.as_int());
    case TypeKind::kVarint: return CompareVarints(a.as_bytes(), b.as_bytes());
    case TypeKind::kDuration: {
      const Duration& da = a.as_duration();
      const Duration& db = b.as_duration();
      if (da.months != db.months) return Cmp(da.months, db.months);
      if (da.days != db.days) return Cmp(da.days, db.days);
      return Cmp(da.nanoseconds, db.nanoseconds);
    }
    case TypeKind::kDecimal: return CompareDecimals(a.as_decimal(), b.as_decimal());
    case TypeKind::kUuid: return CompareUuid(a.as_bytes(), b.as_bytes());
    case TypeKind::kTimeuuid: return CompareTimeuuid(a.as_bytes(), b.as_bytes());
    case TypeKind::kList: case TypeKind::kVector: return CompareSequences(type.params()[0], a.as_elements(), b.as_elements());
    case TypeKind::kSet:
      return CompareSequences(type.params()[0], SortedUnique(type.params()[0], a.as_elements()),
                              SortedUnique(type.params()[0], b.as_elements()));
    case TypeKind::kMap: {
      auto sorted = [&](const std::vector<std::pair<Value, Value>>& e) {
        auto v = e;  // by key, each key once (the first occurrence, as the key encoding keeps)
        std::stable_sort(v.begin(), v.end(), [&](const auto& x, const auto& y) {
          return CompareValues(type.params()[0], x.first, y.first) < 0;
        });
        v.erase(std::unique(v.begin(), v.end(), [&](const auto& x, const auto& y) {
                  return CompareValues(type.params()[0], x.first, y.first) == 0;
                }), v.end());
        return v;
      };
      auto sa = sorted(a.as_entries()), sb = sorted(b.as_entries());
      for (size_t i = 0; i < sa.size() && i < sb.size(); ++i) {
        int c = CompareValues(type.params()[0], sa[i].first, sb[i].first);
        if (c == 0) c = CompareValues(type.params()[1], sa[i].second, sb[i].second);
        if (c != 0) return c;
      }
      return Cmp(sa.size(), sb.size());
    }
    case TypeKind::kTuple: case TypeKind::kUdt: {
      const auto& pa = a.as_elements();
      const auto& pb = b.as_elements();
      for (size_t i = 0; i < type.params().size(); ++i) {
        Value na = i < pa.size() ? pa[i] : Value(), nb = i < pb.size() ? pb[i] : Value();
        int c = CompareValues(type.params()[i], na, nb);
        if (c != 0) return c;
      }
      return 0;
    }
    default:  // ascii, text, blob, inet
      return CompareBytes(a.as_bytes(), b.as_bytes());
  }
}

bool ReferencesDuration(const CqlType& type) {
  if (type.kind() == TypeKind::kDuration) return true;
  for (const CqlType& p : type.params()) {
    if (ReferencesDuration(p)) return true;
  }
  return false;
}

}  // namespace tessera
