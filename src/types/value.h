// Value: an in-memory CQL value, interpreted through its CqlType.
//
// The representation is deliberately small; the CqlType says how to read it:
//   null                          -> Null
//   boolean                       -> bool
//   tinyint, smallint, int, bigint,
//   counter, timestamp (ms since epoch), time (ns since midnight),
//   date (raw unsigned days, 2^31 = 1970-01-01)      -> int64_t
//   float                         -> float
//   double                        -> double
//   ascii, text, blob, inet (4 or 16 bytes), uuid, timeuuid (16 bytes),
//   varint (two's-complement big-endian bytes)       -> std::string
//   decimal                       -> Decimal
//   duration                      -> Duration
//   list, set, tuple              -> Elements (tuple components may be Null)
//   map                           -> Entries
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessera {

class Value;

struct Null {
  bool operator==(const Null&) const = default;
};

// decimal = unscaled * 10^-scale (native protocol v4 §6.5).
struct Decimal {
  int32_t scale = 0;
  std::string unscaled;  // varint: two's-complement big-endian, minimal length
  bool operator==(const Decimal&) const = default;
};

// duration (native protocol v4 §6.17): months, days, nanoseconds, all of one sign.
struct Duration {
  int32_t months = 0;
  int32_t days = 0;
  int64_t nanoseconds = 0;
  bool operator==(const Duration&) const = default;
};

struct Elements {
  std::vector<Value> items;
  bool operator==(const Elements&) const;
};

struct Entries {
  std::vector<std::pair<Value, Value>> items;
  bool operator==(const Entries&) const;
};

class Value {
 public:
  using Storage = std::variant<Null, bool, int64_t, float, double, std::string, Decimal, Duration,
                               Elements, Entries>;

  Value() = default;  // null
  Value(Storage v) : v_(std::move(v)) {}  // NOLINT: implicit by design

  static Value Boolean(bool b) { return Value(Storage(b)); }
  static Value Int(int64_t i) { return Value(Storage(i)); }
  static Value Float(float f) { return Value(Storage(f)); }
  static Value Double(double d) { return Value(Storage(d)); }
  static Value Bytes(std::string b) { return Value(Storage(std::move(b))); }
  static Value List(std::vector<Value> items) { return Value(Storage(Elements{std::move(items)})); }
  static Value Map(std::vector<std::pair<Value, Value>> items) {
    return Value(Storage(Entries{std::move(items)}));
  }

  bool is_null() const { return std::holds_alternative<Null>(v_); }
  // Accessors. REQUIRES: the value holds that alternative.
  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  float as_float() const { return std::get<float>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const std::string& as_bytes() const { return std::get<std::string>(v_); }
  const Decimal& as_decimal() const { return std::get<Decimal>(v_); }
  const Duration& as_duration() const { return std::get<Duration>(v_); }
  const std::vector<Value>& as_elements() const { return std::get<Elements>(v_).items; }
  const std::vector<std::pair<Value, Value>>& as_entries() const { return std::get<Entries>(v_).items; }

  const Storage& storage() const { return v_; }
  // Structural equality of the representation (NaN != NaN, as in C++).
  bool operator==(const Value& other) const { return v_ == other.v_; }

 private:
  Storage v_;
};

}  // namespace tessera
