// Random CQL values for property tests, biased towards edge cases: small
// alphabets (so that prefixes and ties are common), the seeds' 'a100' vs
// 'a1001' trap, zero bytes, extremes, -0.0, NaN, infinities, long varints.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "types/cql_type.h"
#include "types/decimal_digits.h"
#include "types/value.h"

namespace tessera::testing {

inline std::vector<CqlType> KeyableScalarTypes() {
  std::vector<CqlType> out;
  for (auto k : {TypeKind::kAscii, TypeKind::kText, TypeKind::kBlob, TypeKind::kBoolean, TypeKind::kTinyint,
                 TypeKind::kSmallint, TypeKind::kInt, TypeKind::kBigint, TypeKind::kVarint, TypeKind::kFloat,
                 TypeKind::kDouble, TypeKind::kDecimal, TypeKind::kTimestamp, TypeKind::kDate, TypeKind::kTime,
                 TypeKind::kUuid, TypeKind::kTimeuuid, TypeKind::kInet}) {
    out.push_back(CqlType::Scalar(k));
  }
  return out;
}

inline std::vector<CqlType> KeyableTypes() {
  auto out = KeyableScalarTypes();
  auto p = [](const char* s) { return *CqlType::Parse(s); };
  for (const char* s : {"frozen<list<int>>", "frozen<list<text>>", "frozen<set<bigint>>", "frozen<set<text>>",
                        "frozen<map<text, int>>", "tuple<int, text>", "tuple<text, frozen<list<int>>, double>",
                        "frozen<list<frozen<list<smallint>>>>"}) {
    out.push_back(p(s));
  }
  // A frozen user type: its key encoding ends after the last non-null field.
  out.push_back(CqlType::UserType("ks", "address", {"street", "zip", "tags"},
                                  {p("text"), p("int"), p("frozen<set<text>>")}, /*frozen=*/true));
  return out;
}

class RandomValues {
 public:
  explicit RandomValues(uint64_t seed) : rng_(seed) {}

  int64_t Pick(std::initializer_list<int64_t> v) { return *(v.begin() + Uniform(0, static_cast<int64_t>(v.size()) - 1)); }
  int64_t Uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool Coin() { return Uniform(0, 1) == 1; }

  int64_t Int(int bits) {
    int64_t lo = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    int64_t hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
    switch (Uniform(0, 3)) {
      case 0: return Uniform(-3, 3);
      case 1: return Pick({lo, hi, lo + 1, hi - 1});
      case 2: return Uniform(std::max<int64_t>(lo, -1000), std::min<int64_t>(hi, 1000));
      default: return Uniform(lo, hi);
    }
  }

  std::string Text(bool ascii_only, bool allow_zero) {
    static const std::vector<std::string> kTraps = {"a1", "a10", "a100", "a1001", "a2", "b", "", "a", "aa"};
    if (Uniform(0, 3) == 0) return kTraps[static_cast<size_t>(Uniform(0, static_cast<int64_t>(kTraps.size()) - 1))];
    std::string s;
    int n = static_cast<int>(Uniform(0, 6));
    for (int i = 0; i < n; ++i) {
      int c = static_cast<int>(Uniform(0, 6));
      if (c == 0 && allow_zero) s.push_back('\0');
      else if (c == 1 && !ascii_only) s += "\xc3\xa9";  // é
      else s.push_back(static_cast<char>('a' + Uniform(0, 2)));
    }
    return s;
  }

  std::string Blob() {
    std::string s;
    int n = static_cast<int>(Uniform(0, 5));
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(Pick({0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe})));
    return s;
  }

  std::string Varint() {
    // Random magnitude up to 20 bytes, then minimal two's complement via the decimal helpers.
    std::string digits;
    int n = static_cast<int>(Uniform(1, Coin() ? 3 : 45));
    for (int i = 0; i < n; ++i) digits.push_back(static_cast<char>('0' + Uniform(i == 0 ? 1 : 0, 9)));
    if (Uniform(0, 6) == 0) digits = "0";
    return DecimalStringToVarint(digits != "0" && Coin(), digits);
  }

  std::string Uuid(bool time_based) {
    std::string u(16, '\0');
    for (auto& c : u) c = static_cast<char>(Pick({0x00, 0x01, 0x7f, 0x80, 0xff, 0x12}));
    int version = time_based ? 1 : static_cast<int>(Pick({1, 4, 4, 3}));
    u[6] = static_cast<char>((u[6] & 0x0F) | (version << 4));
    u[8] = static_cast<char>((u[8] & 0x3F) | 0x80);
    return u;
  }

  Value Random(const CqlType& t) {
    switch (t.kind()) {
      case TypeKind::kBoolean: return Value::Boolean(Coin());
      case TypeKind::kTinyint: return Value::Int(Int(8));
      case TypeKind::kSmallint: return Value::Int(Int(16));
      case TypeKind::kInt: return Value::Int(Int(32));
      case TypeKind::kBigint: case TypeKind::kTimestamp: case TypeKind::kCounter: return Value::Int(Int(64));
      case TypeKind::kDate: return Value::Int(Pick({0, 1, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff,
                                                    Uniform(0, 0xffffffff)}));
      case TypeKind::kTime: return Value::Int(Pick({0, 1, 86'399'999'999'999LL, Uniform(0, 86'399'999'999'999LL)}));
      case TypeKind::kFloat: {
        float special[] = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()};
        return Value::Float(Coin() ? special[Uniform(0, 8)] : static_cast<float>(Uniform(-1000, 1000)) / 7.0f);
      }
      case TypeKind::kDouble: {
        double special[] = {0.0, -0.0, 1.0, -1.0, std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::lowest()};
        return Value::Double(Coin() ? special[Uniform(0, 8)] : static_cast<double>(Uniform(-100000, 100000)) / 13.0);
      }
      case TypeKind::kAscii: return Value::Bytes(Text(true, false));
      case TypeKind::kText: return Value::Bytes(Text(false, true));
      case TypeKind::kBlob: return Value::Bytes(Blob());
      case TypeKind::kVarint: return Value::Bytes(Varint());
      case TypeKind::kDecimal: return Value(Decimal{static_cast<int32_t>(Uniform(-6, 8)), Varint()});
      case TypeKind::kUuid: return Value::Bytes(Uuid(false));
      case TypeKind::kTimeuuid: return Value::Bytes(Uuid(true));
      case TypeKind::kInet: {
        std::string b = Coin() ? std::string(4, '\0') : std::string(16, '\0');
        for (auto& c : b) c = static_cast<char>(Pick({0, 1, 127, 128, 255}));
        return Value::Bytes(b);
      }
      case TypeKind::kDuration:
        return Value(Duration{static_cast<int32_t>(Uniform(0, 100)), static_cast<int32_t>(Uniform(0, 100)),
                              Uniform(0, INT64_MAX)});
      case TypeKind::kList: case TypeKind::kSet: {
        std::vector<Value> items;
        int n = static_cast<int>(Uniform(0, 3));
        for (int i = 0; i < n; ++i) items.push_back(Random(t.params()[0]));
        return Value::List(std::move(items));
      }
      case TypeKind::kVector: {
        std::vector<Value> items;
        for (uint32_t i = 0; i < t.dimension(); ++i) items.push_back(Random(t.params()[0]));
        return Value::List(std::move(items));
      }
      case TypeKind::kMap: {
        std::vector<std::pair<Value, Value>> items;
        int n = static_cast<int>(Uniform(0, 3));
        for (int i = 0; i < n; ++i) items.emplace_back(Random(t.params()[0]), Random(t.params()[1]));
        return Value::Map(std::move(items));
      }
      case TypeKind::kTuple:
      case TypeKind::kUdt: {
        std::vector<Value> items;
        for (const auto& p : t.params()) items.push_back(Uniform(0, 3) == 0 ? Value() : Random(p));
        return Value::List(std::move(items));
      }
    }
    return Value();
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace tessera::testing
