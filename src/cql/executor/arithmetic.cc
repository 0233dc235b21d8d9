#include "cql/executor/arithmetic.h"

#include <gmpxx.h>

#include <charconv>
#include <chrono>
#include <functional>
#include <cmath>
#include <limits>

#include "types/serialization.h"
#include "types/value.h"
#include "types/value_format.h"

namespace tessera::cql {
namespace {

constexpr int kUnbounded = 1 << 20;
constexpr int kDecimal128Digits = 34;
constexpr int64_t kMillisPerDay = 86'400'000;

bool IsNumber(TypeKind k) {
  switch (k) {
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kCounter: case TypeKind::kVarint: case TypeKind::kFloat: case TypeKind::kDouble:
    case TypeKind::kDecimal:
      return true;
    default:
      return false;
  }
}

bool IsFloating(TypeKind k) { return k == TypeKind::kFloat || k == TypeKind::kDouble || k == TypeKind::kDecimal; }

int SizeOf(TypeKind k) {
  switch (k) {
    case TypeKind::kTinyint: return 1;
    case TypeKind::kSmallint: return 2;
    case TypeKind::kInt: case TypeKind::kFloat: return 4;
    case TypeKind::kBigint: case TypeKind::kCounter: case TypeKind::kDouble: return 8;
    default: return kUnbounded;
  }
}

TypeKind NumberResult(TypeKind l, TypeKind r) {
  const int size = std::max(SizeOf(l), SizeOf(r));
  if (IsFloating(l) || IsFloating(r)) return size == 4 ? TypeKind::kFloat : size == 8 ? TypeKind::kDouble : TypeKind::kDecimal;
  switch (size) {
    case 1: return TypeKind::kTinyint;
    case 2: return TypeKind::kSmallint;
    case 4: return TypeKind::kInt;
    case 8: return TypeKind::kBigint;
    default: return TypeKind::kVarint;
  }
}

Status Unsupported(char op, const CqlType& l, const CqlType& r) {
  return Status::InvalidArgument(std::string("the '") + op + "' operation is not supported between " + l.ToCql() +
                                 " and " + r.ToCql());
}

Status Failed(char op, const CqlType& l, const CqlType& r, const std::string& why) {
  return Status::InvalidArgument(std::string("the operation '") + l.ToCql() + " " + op + " " + r.ToCql() +
                                 "' failed: " + why);
}

// ---- big numbers (two's-complement big-endian bytes <-> mpz) ----

mpz_class FromTwosComplement(const std::string& bytes) {
  mpz_class v;
  if (bytes.empty()) return v;
  mpz_import(v.get_mpz_t(), bytes.size(), 1, 1, 1, 0, bytes.data());
  if (static_cast<unsigned char>(bytes[0]) & 0x80) {
    mpz_class two_n;
    mpz_ui_pow_ui(two_n.get_mpz_t(), 2, 8 * bytes.size());
    v -= two_n;
  }
  return v;
}

std::string ToTwosComplement(const mpz_class& v) {
  // The fewest bytes whose two's complement holds v.
  size_t n = 1;
  mpz_class limit;
  for (;; ++n) {
    mpz_ui_pow_ui(limit.get_mpz_t(), 2, 8 * n - 1);
    if (v < limit && v >= -limit) break;
  }
  mpz_class u = v;
  if (u < 0) {
    mpz_class two_n;
    mpz_ui_pow_ui(two_n.get_mpz_t(), 2, 8 * n);
    u += two_n;
  }
  std::string out(n, '\0');
  size_t count = 0;
  std::string raw(n, '\0');
  mpz_export(raw.data(), &count, 1, 1, 1, 0, u.get_mpz_t());
  out.replace(n - count, count, raw.data(), count);
  return out;
}

struct BigDecimal {
  mpz_class unscaled;
  int64_t scale = 0;
};

mpz_class Pow10(int64_t n) {
  mpz_class p;
  mpz_ui_pow_ui(p.get_mpz_t(), 10, static_cast<unsigned long>(n));
  return p;
}

size_t Digits(const mpz_class& v) {
  if (v == 0) return 1;
  mpz_class a = abs(v);
  return a.get_str(10).size();
}

// Drops trailing zeros while the scale stays at or above `preferred`.
void StripZeros(BigDecimal* d, int64_t preferred) {
  while (d->scale > preferred && d->unscaled != 0 && mpz_divisible_ui_p(d->unscaled.get_mpz_t(), 10)) {
    d->unscaled /= 10;
    --d->scale;
  }
}

// Rounds q (with remainder sign `sticky` beyond it) to `digits` significant digits, half even.
void RoundTo(BigDecimal* d, size_t digits, bool sticky) {
  const size_t have = Digits(d->unscaled);
  if (have <= digits) return;
  const size_t drop = have - digits;
  const mpz_class p = Pow10(static_cast<int64_t>(drop));
  mpz_class q, r;
  mpz_tdiv_qr(q.get_mpz_t(), r.get_mpz_t(), d->unscaled.get_mpz_t(), p.get_mpz_t());
  const mpz_class twice = abs(r) * 2;
  const int cmp = twice > p ? 1 : twice < p ? -1 : (sticky ? 1 : 0);
  const bool away = cmp > 0 || (cmp == 0 && mpz_odd_p(q.get_mpz_t()));
  if (away) q += (d->unscaled < 0 ? -1 : 1);
  d->unscaled = q;
  d->scale -= static_cast<int64_t>(drop);
  if (Digits(d->unscaled) > digits) {  // 999.. rounded up to 1000..
    d->unscaled /= 10;
    --d->scale;
  }
}

// ---- operands as numbers ----

struct Number {
  TypeKind kind;
  int64_t i = 0;     // fixed-size integers
  double f = 0;      // float and double
  mpz_class big;     // varint
  BigDecimal dec;    // decimal
};

Result<Number> ReadNumber(const CqlType& t, const std::string& bytes) {
  TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(t, bytes));
  Number n{t.kind()};
  if (n.kind == TypeKind::kCounter) n.kind = TypeKind::kBigint;
  switch (t.kind()) {
    case TypeKind::kFloat: n.f = v.as_float(); break;
    case TypeKind::kDouble: n.f = v.as_double(); break;
    case TypeKind::kVarint: n.big = FromTwosComplement(v.as_bytes()); break;
    case TypeKind::kDecimal:
      n.dec.unscaled = FromTwosComplement(v.as_decimal().unscaled);
      n.dec.scale = v.as_decimal().scale;
      break;
    default: n.i = v.as_int(); break;
  }
  return n;
}

BigDecimal DecimalOfDouble(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest form, as Java's Double.toString
  std::string s(buf, r.ptr);
  int64_t exp = 0;
  if (auto e = s.find_first_of("eE"); e != std::string::npos) {
    exp = std::stoll(s.substr(e + 1));
    s = s.substr(0, e);
  }
  BigDecimal out;
  if (auto dot = s.find('.'); dot != std::string::npos) {
    out.scale = static_cast<int64_t>(s.size() - dot - 1);
    s.erase(dot, 1);
  }
  out.unscaled = mpz_class(s, 10);
  out.scale -= exp;
  return out;
}

Result<Number> Convert(const Number& n, TypeKind to) {
  Number out{to};
  const bool from_int = !IsFloating(n.kind) && n.kind != TypeKind::kVarint;
  switch (to) {
    case TypeKind::kFloat:
    case TypeKind::kDouble:
      out.f = from_int ? static_cast<double>(n.i) : n.f;
      if (to == TypeKind::kFloat) out.f = static_cast<float>(out.f);
      break;
    case TypeKind::kVarint:
      out.big = n.kind == TypeKind::kVarint ? n.big : mpz_class(static_cast<signed long>(n.i));
      break;
    case TypeKind::kDecimal:
      if (n.kind == TypeKind::kDecimal) out.dec = n.dec;
      else if (n.kind == TypeKind::kVarint) out.dec.unscaled = n.big;
      else if (from_int) out.dec.unscaled = mpz_class(static_cast<signed long>(n.i));
      else if (!std::isfinite(n.f)) return Status::InvalidArgument("a decimal cannot hold " + std::to_string(n.f));
      else out.dec = DecimalOfDouble(n.f);
      break;
    default:
      out.i = n.i;
      break;
  }
  return out;
}

int64_t Wrap(TypeKind k, uint64_t v) {
  switch (k) {
    case TypeKind::kTinyint: return static_cast<int8_t>(v);
    case TypeKind::kSmallint: return static_cast<int16_t>(v);
    case TypeKind::kInt: return static_cast<int32_t>(v);
    default: return static_cast<int64_t>(v);
  }
}

Result<std::string> Write(const Number& n) {
  Value v;
  switch (n.kind) {
    case TypeKind::kFloat: v = Value::Float(static_cast<float>(n.f)); break;
    case TypeKind::kDouble: v = Value::Double(n.f); break;
    case TypeKind::kVarint: v = Value::Bytes(ToTwosComplement(n.big)); break;
    case TypeKind::kDecimal: {
      if (n.dec.scale > std::numeric_limits<int32_t>::max() || n.dec.scale < std::numeric_limits<int32_t>::min()) {
        return Status::InvalidArgument("decimal scale out of range");
      }
      v = Value(Value::Storage(Decimal{static_cast<int32_t>(n.dec.scale), ToTwosComplement(n.dec.unscaled)}));
      break;
    }
    default: v = Value::Int(n.i); break;
  }
  std::string out;
  TESSERA_RETURN_IF_ERROR(Serialize(CqlType::Scalar(n.kind), v, &out));
  return out;
}

// Fixed-size integers, with Java's wrapping and its exceptions.
Result<int64_t> IntegerOp(char op, TypeKind k, int64_t a, int64_t b, const std::function<Status(std::string)>& fail) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case '+': return Wrap(k, ua + ub);
    case '-': return Wrap(k, ua - ub);
    case '*': return Wrap(k, ua * ub);
    case '/':
    case '%':
      if (b == 0) return fail("/ by zero");
      if (b == -1) return op == '/' ? Wrap(k, 0 - ua) : 0;  // MIN / -1 wraps to MIN in Java
      return Wrap(k, static_cast<uint64_t>(op == '/' ? a / b : a % b));
  }
  return fail("unknown operator");
}

Result<BigDecimal> DecimalOp(char op, const BigDecimal& a, const BigDecimal& b, const std::function<Status(std::string)>& fail) {
  BigDecimal out;
  const int64_t scale = std::max(a.scale, b.scale);
  if (scale - std::min(a.scale, b.scale) > 100'000) return fail("scales too far apart");
  const mpz_class ax = a.unscaled * Pow10(scale - a.scale), bx = b.unscaled * Pow10(scale - b.scale);
  switch (op) {
    case '+': out.unscaled = ax + bx; out.scale = scale; return out;
    case '-': out.unscaled = ax - bx; out.scale = scale; return out;
    case '*': out.unscaled = a.unscaled * b.unscaled; out.scale = a.scale + b.scale; return out;
    case '%':
      if (b.unscaled == 0) return fail("Division by zero");
      mpz_tdiv_r(out.unscaled.get_mpz_t(), ax.get_mpz_t(), bx.get_mpz_t());
      out.scale = scale;
      return out;
    case '/': {
      if (b.unscaled == 0) return fail(a.unscaled == 0 ? "Division undefined" : "Division by zero");
      // Enough digits that the quotient has more than 34, then round half even.
      const int64_t extra = kDecimal128Digits + 1 + static_cast<int64_t>(Digits(b.unscaled)) -
                            static_cast<int64_t>(Digits(a.unscaled));
      const int64_t shift = std::max<int64_t>(extra, 0);
      const mpz_class n = a.unscaled * Pow10(shift);
      mpz_class q, r;
      mpz_tdiv_qr(q.get_mpz_t(), r.get_mpz_t(), n.get_mpz_t(), b.unscaled.get_mpz_t());
      out.unscaled = q;
      out.scale = a.scale - b.scale + shift;
      RoundTo(&out, kDecimal128Digits, r != 0);
      StripZeros(&out, a.scale - b.scale);
      return out;
    }
  }
  return fail("unknown operator");
}

Result<std::string> NumberOperation(char op, const CqlType& l, const std::string& lv, const CqlType& r,
                                    const std::string& rv) {
  const TypeKind kind = NumberResult(l.kind(), r.kind());
  auto fail = [&](std::string why) { return Failed(op, l, r, why); };
  TESSERA_ASSIGN_OR_RETURN(Number a0, ReadNumber(l, lv));
  TESSERA_ASSIGN_OR_RETURN(Number b0, ReadNumber(r, rv));
  TESSERA_ASSIGN_OR_RETURN(Number a, Convert(a0, kind));
  TESSERA_ASSIGN_OR_RETURN(Number b, Convert(b0, kind));
  Number out{kind};
  switch (kind) {
    case TypeKind::kFloat:
    case TypeKind::kDouble: {
      double x = 0;
      if (kind == TypeKind::kFloat) {
        const float fa = static_cast<float>(a.f), fb = static_cast<float>(b.f);
        x = op == '+' ? fa + fb : op == '-' ? fa - fb : op == '*' ? fa * fb : op == '/' ? fa / fb : std::fmod(fa, fb);
      } else {
        x = op == '+' ? a.f + b.f : op == '-' ? a.f - b.f : op == '*' ? a.f * b.f : op == '/' ? a.f / b.f : std::fmod(a.f, b.f);
      }
      out.f = x;
      break;
    }
    case TypeKind::kVarint:
      switch (op) {
        case '+': out.big = a.big + b.big; break;
        case '-': out.big = a.big - b.big; break;
        case '*': out.big = a.big * b.big; break;
        default:
          if (b.big == 0) return fail("BigInteger divide by zero");
          if (op == '/') mpz_tdiv_q(out.big.get_mpz_t(), a.big.get_mpz_t(), b.big.get_mpz_t());
          else mpz_tdiv_r(out.big.get_mpz_t(), a.big.get_mpz_t(), b.big.get_mpz_t());
      }
      break;
    case TypeKind::kDecimal: {
      TESSERA_ASSIGN_OR_RETURN(out.dec, DecimalOp(op, a.dec, b.dec, fail));
      break;
    }
    default: {
      TESSERA_ASSIGN_OR_RETURN(out.i, IntegerOp(op, kind, a.i, b.i, fail));
      break;
    }
  }
  return Write(out);
}

// ---- time ----

// java.util.Calendar in UTC: add months (the day clamped to the month's end), then days, then milliseconds.
int64_t AddDuration(int64_t millis, int64_t months, int64_t days, int64_t nanos) {
  using namespace std::chrono;
  if (months != 0) {
    const sys_time<milliseconds> at{milliseconds{millis}};
    const sys_days day = floor<std::chrono::days>(at);
    year_month_day ymd{day};
    ymd += std::chrono::months{months};
    if (!ymd.ok()) ymd = ymd.year() / ymd.month() / last;
    millis = (sys_days{ymd} + (at - day)).time_since_epoch().count();
  }
  return millis + days * kMillisPerDay + nanos / 1'000'000;
}

Result<std::string> TemporalOperation(char op, const CqlType& l, const std::string& lv, const CqlType& r,
                                      const std::string& rv) {
  TESSERA_ASSIGN_OR_RETURN(Value t, Deserialize(l, lv));
  TESSERA_ASSIGN_OR_RETURN(Value dv, Deserialize(r, rv));
  const Duration& d = dv.as_duration();
  const int64_t sign = op == '-' ? -1 : 1;
  if (l.kind() == TypeKind::kDate) {
    if (d.nanoseconds != 0) {
      return Status::InvalidArgument("The duration must have a day precision. Was: " + FormatValue(r, rv));
    }
    const int64_t days = t.as_int() - (int64_t{1} << 31);
    const int64_t moved = AddDuration(days * kMillisPerDay, sign * d.months, sign * d.days, 0);
    const int64_t out_days =
        std::chrono::floor<std::chrono::days>(std::chrono::milliseconds{moved}).count() + (int64_t{1} << 31);
    if (out_days < 0 || out_days > int64_t{0xFFFFFFFF}) return Status::InvalidArgument("the date is out of range");
    std::string out;
    TESSERA_RETURN_IF_ERROR(Serialize(l, Value::Int(out_days), &out));
    return out;
  }
  const int64_t moved = AddDuration(t.as_int(), sign * d.months, sign * d.days, sign * d.nanoseconds);
  std::string out;
  TESSERA_RETURN_IF_ERROR(Serialize(l, Value::Int(moved), &out));
  return out;
}

bool IsTemporal(TypeKind k) { return k == TypeKind::kTimestamp || k == TypeKind::kDate; }

}  // namespace

Result<CqlType> OperationType(char op, const CqlType& l, const CqlType& r) {
  if (IsNumber(l.kind()) && IsNumber(r.kind())) return CqlType::Scalar(NumberResult(l.kind(), r.kind()));
  if (IsTemporal(l.kind()) && r.kind() == TypeKind::kDuration && (op == '+' || op == '-')) return l;
  return Unsupported(op, l, r);
}

Result<std::string> EvaluateOperation(char op, const CqlType& l, const std::string& lv, const CqlType& r,
                                      const std::string& rv) {
  TESSERA_RETURN_IF_ERROR(OperationType(op, l, r).status());
  if (IsTemporal(l.kind())) return TemporalOperation(op, l, lv, r, rv);
  return NumberOperation(op, l, lv, r, rv);
}

Result<std::string> Negate(const CqlType& type, const std::string& value) {
  if (!IsNumber(type.kind())) return Status::InvalidArgument("Cannot negate a value of type " + type.ToCql());
  std::string zero;
  Value z;
  switch (type.kind()) {
    case TypeKind::kFloat: z = Value::Float(0); break;
    case TypeKind::kDouble: z = Value::Double(0); break;
    case TypeKind::kVarint: z = Value::Bytes(std::string(1, '\0')); break;
    case TypeKind::kDecimal: z = Value(Value::Storage(Decimal{0, std::string(1, '\0')})); break;
    default: z = Value::Int(0); break;
  }
  TESSERA_RETURN_IF_ERROR(Serialize(type.kind() == TypeKind::kCounter ? CqlType::Scalar(TypeKind::kBigint) : type, z, &zero));
  if (type.kind() == TypeKind::kFloat || type.kind() == TypeKind::kDouble) {  // -0.0 and -NaN as Java has them
    TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(type, value));
    std::string out;
    TESSERA_RETURN_IF_ERROR(Serialize(type, type.kind() == TypeKind::kFloat ? Value::Float(-v.as_float())
                                                                            : Value::Double(-v.as_double()), &out));
    return out;
  }
  return EvaluateOperation('-', type, zero, type, value);
}

Result<std::optional<std::string>> EvaluateOperand(const ArithmeticOperand& e,
                                                   const std::vector<std::optional<std::string>>& values) {
  switch (e.kind) {
    case ArithmeticOperand::Kind::kConstant: return std::optional<std::string>(e.constant);
    case ArithmeticOperand::Kind::kColumn:
      return e.column < values.size() ? values[e.column] : std::optional<std::string>();
    case ArithmeticOperand::Kind::kNegation: {
      TESSERA_ASSIGN_OR_RETURN(auto v, EvaluateOperand(e.args[0], values));
      if (!v) return v;
      TESSERA_ASSIGN_OR_RETURN(std::string out, Negate(e.args[0].type, *v));
      return std::optional<std::string>(std::move(out));
    }
    case ArithmeticOperand::Kind::kOperation: {
      TESSERA_ASSIGN_OR_RETURN(auto a, EvaluateOperand(e.args[0], values));
      TESSERA_ASSIGN_OR_RETURN(auto b, EvaluateOperand(e.args[1], values));
      if (!a || !b) return std::optional<std::string>();
      TESSERA_ASSIGN_OR_RETURN(std::string out, EvaluateOperation(e.op, e.args[0].type, *a, e.args[1].type, *b));
      return std::optional<std::string>(std::move(out));
    }
  }
  return std::optional<std::string>();
}

}  // namespace tessera::cql
