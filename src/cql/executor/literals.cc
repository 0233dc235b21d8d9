#include "cql/executor/literals.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>

#include "common/bytes.h"
#include "types/decimal_digits.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

const char* KindWord(Term::Kind k) {
  switch (k) {
    case Term::Kind::kString: return "STRING";
    case Term::Kind::kInteger: return "INTEGER";
    case Term::Kind::kFloat: return "FLOAT";
    case Term::Kind::kBoolean: return "BOOLEAN";
    case Term::Kind::kUuid: return "UUID";
    case Term::Kind::kBlob: return "HEX";
    case Term::Kind::kDuration: return "DURATION";
    default: return "literal";
  }
}

Status Invalid(const Term& t, const CqlType& type, const std::string& receiver, const std::string& why = "") {
  std::string msg = std::string("Invalid ") + KindWord(t.kind) + " constant (" + t.text + ") for \"" + receiver +
                    "\" of type " + type.ToCql();
  if (!why.empty()) msg += ": " + why;
  return Status::InvalidArgument(msg);
}

bool ParseInt64(std::string_view s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {  // proleptic Gregorian, H. Hinnant's algorithm
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Reads `n` digits at s[*i]; false when absent.
bool Digits(std::string_view s, size_t* i, int n, int64_t* v) {
  if (*i + static_cast<size_t>(n) > s.size()) return false;
  *v = 0;
  for (int k = 0; k < n; ++k) {
    char c = s[*i + static_cast<size_t>(k)];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    *v = *v * 10 + (c - '0');
  }
  *i += static_cast<size_t>(n);
  return true;
}

// Days in month m (1..12) of year y, proleptic Gregorian.
int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

bool ParseDate(std::string_view s, size_t* i, int64_t* days) {
  int64_t y, m, d;
  bool neg = *i < s.size() && s[*i] == '-';
  if (neg) ++*i;
  size_t start = *i;
  while (*i < s.size() && std::isdigit(static_cast<unsigned char>(s[*i]))) ++*i;
  if (*i - start < 4 || !ParseInt64(s.substr(start, *i - start), &y)) return false;
  if (neg) y = -y;
  // Beyond what a timestamp's milliseconds can hold (292 million years) no
  // type takes it, and the day arithmetic below would overflow.
  if (y > 300'000'000 || y < -300'000'000) return false;
  if (*i >= s.size() || s[*i] != '-') return false;
  ++*i;
  if (!Digits(s, i, 2, &m) || *i >= s.size() || s[*i] != '-') return false;
  ++*i;
  if (!Digits(s, i, 2, &d) || m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m)) return false;  // '2020-02-30' is no date
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

// HH:MM[:SS[.fraction]] -> nanoseconds; `max_fraction` digits allowed.
bool ParseTimeOfDay(std::string_view s, size_t* i, int max_fraction, int64_t* nanos) {
  int64_t h, m, sec = 0, frac = 0;
  if (!Digits(s, i, 2, &h) || *i >= s.size() || s[*i] != ':') return false;
  ++*i;
  if (!Digits(s, i, 2, &m)) return false;
  if (*i < s.size() && s[*i] == ':') {
    ++*i;
    if (!Digits(s, i, 2, &sec)) return false;
    if (*i < s.size() && s[*i] == '.') {
      ++*i;
      int n = 0;
      while (*i < s.size() && std::isdigit(static_cast<unsigned char>(s[*i]))) {
        if (++n > max_fraction) return false;
        frac = frac * 10 + (s[(*i)++] - '0');
      }
      if (n == 0) return false;
      for (; n < 9; ++n) frac *= 10;
    }
  }
  if (h > 23 || m > 59 || sec > 59) return false;
  *nanos = ((h * 60 + m) * 60 + sec) * 1'000'000'000 + frac;
  return true;
}

Result<Value> ToInteger(const Term& t, const CqlType& type, const std::string& r, int64_t lo, int64_t hi) {
  int64_t v;
  if (t.kind != Term::Kind::kInteger || !ParseInt64(t.text, &v) || v < lo || v > hi) return Invalid(t, type, r);
  return Value::Int(v);
}

Result<Value> ToFloating(const Term& t, const CqlType& type, const std::string& r) {
  if (t.kind != Term::Kind::kInteger && t.kind != Term::Kind::kFloat) return Invalid(t, type, r);
  std::string s = t.text;
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double d;
  if (s == "nan" || s == "-nan") d = std::numeric_limits<double>::quiet_NaN();
  else if (s == "infinity") d = std::numeric_limits<double>::infinity();
  else if (s == "-infinity") d = -std::numeric_limits<double>::infinity();
  else {
    char* end = nullptr;
    d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return Invalid(t, type, r);
  }
  if (type.kind() == TypeKind::kFloat) return Value::Float(static_cast<float>(d));
  return Value::Double(d);
}

Result<Value> ToDecimal(const Term& t, const CqlType& type, const std::string& r) {
  if (t.kind != Term::Kind::kInteger && t.kind != Term::Kind::kFloat) return Invalid(t, type, r);
  std::string s = t.text;
  bool negative = !s.empty() && s[0] == '-';
  if (negative || (!s.empty() && s[0] == '+')) s.erase(0, 1);
  int64_t exponent = 0;
  size_t e = s.find_first_of("eE");
  if (e != std::string::npos) {
    if (!ParseInt64(s.substr(e + 1)[0] == '+' ? s.substr(e + 2) : s.substr(e + 1), &exponent)) return Invalid(t, type, r);
    s.resize(e);
  }
  size_t dot = s.find('.');
  int64_t scale = 0;
  if (dot != std::string::npos) {
    scale = static_cast<int64_t>(s.size() - dot - 1);
    s.erase(dot, 1);
  }
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return Invalid(t, type, r);
  scale -= exponent;
  if (scale < INT32_MIN || scale > INT32_MAX) return Invalid(t, type, r, "exponent out of range");
  size_t lead = s.find_first_not_of('0');
  s = lead == std::string::npos ? "0" : s.substr(lead);
  return Value(Decimal{static_cast<int32_t>(scale), DecimalStringToVarint(negative && s != "0", s)});
}

Result<Value> ToVarint(const Term& t, const CqlType& type, const std::string& r) {
  if (t.kind != Term::Kind::kInteger) return Invalid(t, type, r);
  std::string s = t.text;
  bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t lead = s.find_first_not_of('0');
  s = lead == std::string::npos ? "0" : s.substr(lead);
  return Value::Bytes(DecimalStringToVarint(negative && s != "0", s));
}

Result<Value> ToUuid(const Term& t, const CqlType& type, const std::string& r) {
  if (t.kind != Term::Kind::kUuid) return Invalid(t, type, r);
  std::string hex;
  for (char c : t.text) {
    if (c != '-') hex.push_back(c);
  }
  std::string bytes;
  if (!FromHex(hex, &bytes) || bytes.size() != 16) return Invalid(t, type, r);
  if (type.kind() == TypeKind::kTimeuuid && (static_cast<unsigned char>(bytes[6]) >> 4) != 1) {
    return Invalid(t, type, r, "not a version 1 (time-based) UUID");
  }
  return Value::Bytes(bytes);
}

Result<Value> ToInet(const Term& t, const CqlType& type, const std::string& r) {
  if (t.kind != Term::Kind::kString) return Invalid(t, type, r);
  std::string bytes = InetAddressBytes(t.text);
  if (!bytes.empty()) return Value::Bytes(std::move(bytes));
  return Invalid(t, type, r, "not an IPv4 or IPv6 address");
}

Result<Value> ToCollection(const Term& t, const CqlType& type, const std::string& r) {
  const auto& p = type.params();
  auto element = [&](const Term& e, const CqlType& et) -> Result<Value> {
    TESSERA_ASSIGN_OR_RETURN(Value v, LiteralToValue(e, et, r));
    if (v.is_null()) return Status::InvalidArgument("null is not supported inside collections (\"" + r + "\")");
    return v;
  };
  switch (type.kind()) {
    case TypeKind::kList: {
      if (t.kind != Term::Kind::kList) return Invalid(t, type, r, "expected a list literal [...]");
      std::vector<Value> items;
      for (const auto& e : t.elements) {
        TESSERA_ASSIGN_OR_RETURN(Value v, element(e, p[0]));
        items.push_back(std::move(v));
      }
      return Value::List(std::move(items));
    }
    case TypeKind::kVector: {  // a list literal of exactly `dimension` elements (Cassandra 5.0)
      if (t.kind != Term::Kind::kList) return Invalid(t, type, r, "expected a vector literal [...]");
      if (t.elements.size() != type.dimension()) {
        return Status::InvalidArgument("Invalid vector literal for " + r + " of type " + type.ToCql() + "; expected " +
                                       std::to_string(type.dimension()) + " elements, but given " +
                                       std::to_string(t.elements.size()));
      }
      std::vector<Value> items;
      for (const auto& e : t.elements) {
        TESSERA_ASSIGN_OR_RETURN(Value v, element(e, p[0]));
        items.push_back(std::move(v));
      }
      return Value::List(std::move(items));
    }
    case TypeKind::kSet: {
      if (t.kind != Term::Kind::kSet) return Invalid(t, type, r, "expected a set literal {...}");
      std::vector<Value> items;
      for (const auto& e : t.elements) {
        TESSERA_ASSIGN_OR_RETURN(Value v, element(e, p[0]));
        items.push_back(std::move(v));
      }
      return Value::List(std::move(items));
    }
    case TypeKind::kMap: {
      bool empty_braces = t.kind == Term::Kind::kSet && t.elements.empty();
      if (t.kind != Term::Kind::kMap && !empty_braces) return Invalid(t, type, r, "expected a map literal {k: v}");
      std::vector<std::pair<Value, Value>> items;
      for (size_t i = 0; i < t.map_values.size(); ++i) {
        TESSERA_ASSIGN_OR_RETURN(Value k, element(t.elements[i], p[0]));
        TESSERA_ASSIGN_OR_RETURN(Value v, element(t.map_values[i], p[1]));
        items.emplace_back(std::move(k), std::move(v));
      }
      return Value::Map(std::move(items));
    }
    case TypeKind::kUdt: {
      TESSERA_ASSIGN_OR_RETURN(Term positional, UserTypeLiteralAsTuple(t, type, r));
      std::vector<Value> items;
      for (size_t i = 0; i < positional.elements.size(); ++i) {
        TESSERA_ASSIGN_OR_RETURN(Value v, LiteralToValue(positional.elements[i], p[i], r + "." + type.field_names()[i]));
        items.push_back(std::move(v));
      }
      return Value::List(std::move(items));
    }
    default: {  // tuple
      if (t.kind != Term::Kind::kTuple) return Invalid(t, type, r, "expected a tuple literal (...)");
      if (t.elements.size() > p.size()) return Invalid(t, type, r, "too many components");
      std::vector<Value> items;
      for (size_t i = 0; i < t.elements.size(); ++i) {
        TESSERA_ASSIGN_OR_RETURN(Value v, LiteralToValue(t.elements[i], p[i], r));
        items.push_back(std::move(v));
      }
      return Value::List(std::move(items));
    }
  }
}

}  // namespace

Result<int64_t> ParseTimestampString(std::string_view s) {
  size_t i = 0;
  int64_t days;
  auto bad = [&] { return Status::InvalidArgument("Unable to parse a date/time from '" + std::string(s) + "'"); };
  if (!ParseDate(s, &i, &days)) return bad();
  int64_t nanos = 0;
  if (i < s.size() && (s[i] == ' ' || s[i] == 'T')) {
    ++i;
    if (!ParseTimeOfDay(s, &i, 3, &nanos)) return bad();
  }
  int64_t offset_minutes = 0;
  if (i < s.size()) {
    if (s[i] == 'Z' || s[i] == 'z') {
      ++i;
    } else if (s[i] == '+' || s[i] == '-') {
      int sign = s[i] == '-' ? -1 : 1;
      ++i;
      int64_t hh, mm = 0;
      if (!Digits(s, &i, 2, &hh)) return bad();
      if (i < s.size() && s[i] == ':') ++i;
      if (i < s.size() && !Digits(s, &i, 2, &mm)) return bad();
      offset_minutes = sign * (hh * 60 + mm);
    }
  }
  if (i != s.size()) return bad();
  // A year of many digits parses; its milliseconds may not fit a timestamp.
  const __int128 millis = __int128{days} * 86'400'000 + nanos / 1'000'000 - offset_minutes * 60'000;
  if (millis > INT64_MAX || millis < INT64_MIN) {
    return Status::InvalidArgument("Timestamp '" + std::string(s) + "' is out of the range of a timestamp");
  }
  return static_cast<int64_t>(millis);
}

Result<Duration> ParseDurationLiteral(std::string_view text) {
  auto bad = [&] { return Status::InvalidArgument("Unable to convert '" + std::string(text) + "' to a duration"); };
  std::string s(text);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.erase(0, 1);
  Duration d;
  __int128 months = 0, days = 0, nanos = 0;
  size_t i = 0;
  if (!s.empty() && s[0] == 'p') {  // ISO 8601: PnYnMnDTnHnMnS or PnW
    ++i;
    bool in_time = false;
    while (i < s.size()) {
      if (s[i] == 't') {
        in_time = true;
        ++i;
        continue;
      }
      size_t start = i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      int64_t n;
      if (i == start || i >= s.size() || !ParseInt64(s.substr(start, i - start), &n)) return bad();
      char unit = s[i++];
      if (!in_time && unit == 'y') months += __int128{n} * 12;
      else if (!in_time && unit == 'm') months += n;
      else if (!in_time && unit == 'w') days += __int128{n} * 7;
      else if (!in_time && unit == 'd') days += n;
      else if (in_time && unit == 'h') nanos += __int128{n} * 3'600'000'000'000;
      else if (in_time && unit == 'm') nanos += __int128{n} * 60'000'000'000;
      else if (in_time && unit == 's') nanos += __int128{n} * 1'000'000'000;
      else return bad();
    }
  } else {  // 1y2mo3w4d5h6m7s8ms9us10ns
    if (s.empty()) return bad();
    while (i < s.size()) {
      size_t start = i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      int64_t n;
      if (i == start || !ParseInt64(s.substr(start, i - start), &n)) return bad();
      size_t u = i;
      while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      std::string unit = s.substr(u, i - u);
      if (unit == "y") months += __int128{n} * 12;
      else if (unit == "mo") months += n;
      else if (unit == "w") days += __int128{n} * 7;
      else if (unit == "d") days += n;
      else if (unit == "h") nanos += __int128{n} * 3'600'000'000'000;
      else if (unit == "m") nanos += __int128{n} * 60'000'000'000;
      else if (unit == "s") nanos += __int128{n} * 1'000'000'000;
      else if (unit == "ms") nanos += __int128{n} * 1'000'000;
      else if (unit == "us" || unit == "µs") nanos += __int128{n} * 1'000;
      else if (unit == "ns") nanos += n;
      else return bad();
    }
  }
  if (months > INT32_MAX || days > INT32_MAX || nanos > INT64_MAX) return bad();
  int sign = negative ? -1 : 1;
  d.months = sign * static_cast<int32_t>(months);
  d.days = sign * static_cast<int32_t>(days);
  d.nanoseconds = sign * static_cast<int64_t>(nanos);
  return d;
}

Result<Term> UserTypeLiteralAsTuple(const Term& t, const CqlType& type, const std::string& r) {
  if (t.kind != Term::Kind::kUserType) {
    return Status::InvalidArgument("Invalid user type literal for " + r + " of type " + type.ToCql());
  }
  Term positional;
  positional.kind = Term::Kind::kTuple;
  positional.position = t.position;
  positional.elements.resize(type.field_names().size());
  std::vector<bool> given(type.field_names().size(), false);
  for (size_t i = 0; i < t.field_names.size(); ++i) {
    const auto& names = type.field_names();
    auto it = std::find(names.begin(), names.end(), t.field_names[i]);
    if (it == names.end()) {
      return Status::InvalidArgument("Unknown field '" + t.field_names[i] + "' in value of user defined type " +
                                     type.udt_name());
    }
    const size_t field = static_cast<size_t>(it - names.begin());
    if (given[field]) {
      return Status::InvalidArgument("Duplicate field '" + t.field_names[i] + "' in value of user defined type " +
                                     type.udt_name());
    }
    given[field] = true;
    positional.elements[field] = t.elements[i];
  }
  return positional;
}

Result<Value> LiteralToValue(const Term& t, const CqlType& type, const std::string& r) {
  if (t.kind == Term::Kind::kNull) return Value();
  if (t.kind == Term::Kind::kBindMarker || t.kind == Term::Kind::kFunctionCall) {
    return Status::InvalidArgument("internal: bind markers and function calls are bound by the executor");
  }
  if (t.kind == Term::Kind::kTypeHint) {
    auto hinted = CqlType::Parse(t.function_name);
    if (!hinted.ok()) return Status::InvalidArgument("Unknown type " + t.function_name);
    return LiteralToValue(t.elements[0], type, r);
  }
  switch (type.kind()) {
    case TypeKind::kTinyint: return ToInteger(t, type, r, INT8_MIN, INT8_MAX);
    case TypeKind::kSmallint: return ToInteger(t, type, r, INT16_MIN, INT16_MAX);
    case TypeKind::kInt: return ToInteger(t, type, r, INT32_MIN, INT32_MAX);
    case TypeKind::kBigint:
    case TypeKind::kCounter: return ToInteger(t, type, r, INT64_MIN, INT64_MAX);
    case TypeKind::kVarint: return ToVarint(t, type, r);
    case TypeKind::kFloat:
    case TypeKind::kDouble: return ToFloating(t, type, r);
    case TypeKind::kDecimal: return ToDecimal(t, type, r);
    case TypeKind::kBoolean:
      if (t.kind != Term::Kind::kBoolean) return Invalid(t, type, r);
      return Value::Boolean(t.text == "true");
    case TypeKind::kText:
    case TypeKind::kAscii: {
      if (t.kind != Term::Kind::kString) return Invalid(t, type, r);
      Status valid = ValidateSerialized(type, t.text);
      if (!valid.ok()) return Invalid(t, type, r, valid.message());
      return Value::Bytes(t.text);
    }
    case TypeKind::kBlob: {
      std::string bytes;
      if (t.kind != Term::Kind::kBlob || !FromHex(t.text, &bytes)) return Invalid(t, type, r);
      return Value::Bytes(bytes);
    }
    case TypeKind::kTimestamp: {
      if (t.kind == Term::Kind::kInteger) return ToInteger(t, type, r, INT64_MIN, INT64_MAX);
      if (t.kind != Term::Kind::kString) return Invalid(t, type, r);
      auto ms = ParseTimestampString(t.text);
      if (!ms.ok()) return Invalid(t, type, r, ms.status().message());
      return Value::Int(*ms);
    }
    case TypeKind::kDate: {
      if (t.kind == Term::Kind::kInteger) return ToInteger(t, type, r, 0, UINT32_MAX);
      size_t i = 0;
      int64_t days;
      if (t.kind != Term::Kind::kString || !ParseDate(t.text, &i, &days) || i != t.text.size()) {
        return Invalid(t, type, r, "expected yyyy-mm-dd");
      }
      int64_t raw = days + (int64_t{1} << 31);
      if (raw < 0 || raw > UINT32_MAX) return Invalid(t, type, r, "date out of range");
      return Value::Int(raw);
    }
    case TypeKind::kTime: {
      if (t.kind == Term::Kind::kInteger) return ToInteger(t, type, r, 0, 86'399'999'999'999LL);
      size_t i = 0;
      int64_t nanos;
      if (t.kind != Term::Kind::kString || !ParseTimeOfDay(t.text, &i, 9, &nanos) || i != t.text.size()) {
        return Invalid(t, type, r, "expected HH:MM:SS[.fffffffff]");
      }
      return Value::Int(nanos);
    }
    case TypeKind::kUuid:
    case TypeKind::kTimeuuid: return ToUuid(t, type, r);
    case TypeKind::kInet: return ToInet(t, type, r);
    case TypeKind::kDuration: {
      if (t.kind != Term::Kind::kDuration && t.kind != Term::Kind::kString) return Invalid(t, type, r);
      TESSERA_ASSIGN_OR_RETURN(Duration d, ParseDurationLiteral(t.text));
      return Value(d);
    }
    default:
      return ToCollection(t, type, r);
  }
}

}  // namespace tessera::cql
