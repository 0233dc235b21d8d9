#include "cql/executor/term_binder.h"

#include "cql/executor/arithmetic.h"

#include <atomic>
#include <functional>
#include <optional>

#include "common/bytes.h"
#include "common/time_uuid.h"
#include "cql/executor/json_values.h"
#include "cql/executor/literals.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

Result<BoundValue> Serialized(const CqlType& type, const Value& v) {
  BoundValue b;
  if (v.is_null()) return b;
  b.kind = BoundValue::Kind::kValue;
  TESSERA_RETURN_IF_ERROR(Serialize(type, v, &b.bytes));
  return b;
}

// Milliseconds of a timestamp-valued function argument (now(), a timestamp or a timeuuid literal).
Result<int64_t> MillisOfArgument(const Term& arg, const std::string& receiver, const BindContext& ctx) {
  if (arg.kind == Term::Kind::kFunctionCall) {
    std::string fn = AsciiLower(arg.function_name);
    if (fn == "now" || fn == "currenttimeuuid" || fn == "currenttimestamp") return ctx.now_micros / 1000;
  }
  auto ts = BindTerm(arg, CqlType::Scalar(TypeKind::kTimestamp), receiver, ctx);
  if (ts.ok() && ts->kind == BoundValue::Kind::kValue) return static_cast<int64_t>(GetBigEndian64(ts->bytes.data()));
  return Status::InvalidArgument("Invalid argument for a time conversion function for \"" + receiver + "\"");
}

// bit_reverse(bigint [, preserve_sign boolean]) -> bigint (Spanner's BIT_REVERSE).
template <typename Expect>
Result<BoundValue> BitReverseCall(const Term& t, const std::string& receiver, const BindContext& ctx, Expect expect) {
  if (t.elements.empty() || t.elements.size() > 2) {
    return Status::InvalidArgument("bit_reverse takes a bigint and an optional boolean preserve_sign");
  }
  TESSERA_RETURN_IF_ERROR(expect(TypeKind::kBigint));
  TESSERA_ASSIGN_OR_RETURN(BoundValue v, BindTerm(t.elements[0], CqlType::Scalar(TypeKind::kBigint), receiver, ctx));
  bool preserve_sign = false;
  if (t.elements.size() == 2) {
    TESSERA_ASSIGN_OR_RETURN(BoundValue p, BindTerm(t.elements[1], CqlType::Scalar(TypeKind::kBoolean), receiver, ctx));
    preserve_sign = p.kind == BoundValue::Kind::kValue && p.bytes.size() == 1 && p.bytes[0] != 0;
  }
  if (v.kind != BoundValue::Kind::kValue || v.bytes.size() != 8) return v;  // null stays null
  BoundValue b;
  b.kind = BoundValue::Kind::kValue;
  PutBigEndian64(&b.bytes, static_cast<uint64_t>(BitReverse(static_cast<int64_t>(GetBigEndian64(v.bytes.data())),
                                                            preserve_sign)));
  return b;
}

// The native type of a blob conversion function's name: `<type>asblob` (to_blob) or
// `blobas<type>` (from blob), or nullopt when `fn` is neither (CQL reference, "Blob conversion
// functions"). The serialized forms are the same bytes.
std::optional<CqlType> NativeOfBlobConversion(const std::string& fn, bool* to_blob) {
  std::string name;
  if (fn.size() > 6 && fn.ends_with("asblob")) {
    *to_blob = true;
    name = fn.substr(0, fn.size() - 6);
  } else if (fn.size() > 6 && fn.starts_with("blobas")) {
    *to_blob = false;
    name = fn.substr(6);
  } else {
    return std::nullopt;
  }
  auto type = CqlType::Parse(name);
  if (!type.ok() || type->IsCollection() || type->IsTupleLike()) return std::nullopt;
  return *type;
}

Result<BoundValue> BlobConversionCall(const Term& t, const std::string& fn, const CqlType& native, bool to_blob,
                                      const std::string& receiver, const BindContext& ctx,
                                      const std::function<Status(const CqlType&)>& expect) {
  if (t.elements.size() != 1) return Status::InvalidArgument(fn + " takes one argument");
  TESSERA_RETURN_IF_ERROR(expect(to_blob ? CqlType::Scalar(TypeKind::kBlob) : native));
  TESSERA_ASSIGN_OR_RETURN(BoundValue v,
                           BindTerm(t.elements[0], to_blob ? native : CqlType::Scalar(TypeKind::kBlob), receiver, ctx));
  if (!to_blob && v.kind == BoundValue::Kind::kValue && !ValidateSerialized(native, v.bytes).ok()) {
    return Status::InvalidArgument("In call to function system." + fn + ", value 0x" + ToHex(v.bytes) +
                                   " is not a valid binary representation for type " + native.ToCql());
  }
  return v;
}

Result<BoundValue> CallFunction(const Term& t, const CqlType& type, const std::string& receiver,
                                const BindContext& ctx) {
  const std::string fn = AsciiLower(t.function_name);
  auto expect = [&](TypeKind k) -> Status {
    if (type.kind() == k || (k == TypeKind::kText && type.kind() == TypeKind::kAscii)) return Status::OK();
    return Status::InvalidArgument("Type error: cannot assign result of function " + fn + " (type " +
                                   CqlType::Scalar(k).ToCql() + ") to " + receiver + " (type " + type.ToCql() + ")");
  };
  BoundValue b;
  b.kind = BoundValue::Kind::kValue;
  if (fn == "now" || fn == "currenttimeuuid") {
    TESSERA_RETURN_IF_ERROR(expect(type.kind() == TypeKind::kUuid ? TypeKind::kUuid : TypeKind::kTimeuuid));
    b.bytes = MakeTimeUuid(ctx.now_micros, *ctx.rng);
    return b;
  }
  if (fn == "uuid") {
    TESSERA_RETURN_IF_ERROR(expect(TypeKind::kUuid));
    std::string u(16, '\0');
    for (int i = 0; i < 16; i += 8) {
      uint64_t r = (*ctx.rng)();
      for (int k = 0; k < 8; ++k) u[static_cast<size_t>(i + k)] = static_cast<char>(r >> (8 * k));
    }
    u[6] = static_cast<char>((u[6] & 0x0F) | 0x40);
    u[8] = static_cast<char>((u[8] & 0x3F) | 0x80);
    b.bytes = u;
    return b;
  }
  if (fn == "bit_reverse") return BitReverseCall(t, receiver, ctx, expect);
  bool to_blob = false;
  if (auto native = NativeOfBlobConversion(fn, &to_blob)) {
    auto expect_type = [&](const CqlType& result) -> Status {
      if (type == result || (result.kind() == TypeKind::kText && type.kind() == TypeKind::kAscii)) return Status::OK();
      return Status::InvalidArgument("Type error: cannot assign result of function system." + fn + " (type " +
                                     result.ToCql() + ") to " + receiver + " (type " + type.ToCql() + ")");
    };
    return BlobConversionCall(t, fn, *native, to_blob, receiver, ctx, expect_type);
  }
  if (fn == "nextval") {  // nextval([ks.]sequence) -> bigint (db/sequences.h)
    if (t.elements.size() != 1 || t.elements[0].kind != Term::Kind::kString) {
      return Status::InvalidArgument("nextval takes the name of a sequence");
    }
    TESSERA_RETURN_IF_ERROR(expect(TypeKind::kBigint));
    if (!ctx.next_value) return Status::InvalidArgument("nextval cannot be used here");
    TESSERA_ASSIGN_OR_RETURN(int64_t v, ctx.next_value(t.elements[0].text));
    PutBigEndian64(&b.bytes, static_cast<uint64_t>(v));
    return b;
  }
  if (fn == "fromjson") {  // fromJson(text): the value its JSON means for the receiver (json_values.h)
    if (t.elements.size() != 1) return Status::InvalidArgument("Invalid number of arguments for function system.fromjson");
    TESSERA_ASSIGN_OR_RETURN(BoundValue text, BindTerm(t.elements[0], CqlType::Scalar(TypeKind::kText), receiver, ctx));
    if (text.kind != BoundValue::Kind::kValue) return text;
    TESSERA_ASSIGN_OR_RETURN(Term literal, JsonToTerm(text.bytes, type, receiver));
    auto bound = BindTerm(literal, type, receiver, ctx);
    if (!bound.ok()) {
      return Status::InvalidArgument("Error decoding JSON value for " + receiver + ": " + bound.status().message());
    }
    return bound;
  }
  if (fn == "mintimeuuid" || fn == "maxtimeuuid") {  // for timeuuid ranges: the least / greatest of a millisecond
    if (t.elements.size() != 1) return Status::InvalidArgument(fn + " takes one argument");
    TESSERA_RETURN_IF_ERROR(expect(TypeKind::kTimeuuid));
    TESSERA_ASSIGN_OR_RETURN(int64_t ms, MillisOfArgument(t.elements[0], receiver, ctx));
    const bool least = fn == "mintimeuuid";
    // A version-1 uuid holds 60 bits of 100 ns ticks since 1582-10-15.
    constexpr int64_t kMaxTicks = (int64_t{1} << 60) - 1;
    if (ms < -kGregorianOffset100ns / 10'000 || ms > (kMaxTicks - kGregorianOffset100ns - 9'999) / 10'000) {
      return Status::InvalidArgument("Timestamp " + std::to_string(ms) + " is out of the range of a timeuuid (" + fn + ")");
    }
    // Clock sequence and node bytes as Cassandra orders them (signed bytes): 0x80.. is least, 0x7f.. greatest.
    b.bytes = TimeUuidOf(ms * 10'000 + (least ? 0 : 9'999) + kGregorianOffset100ns,
                         least ? 0x8080808080808080ULL : 0x7F7F7F7F7F7F7F7FULL);
    return b;
  }
  int64_t millis;
  if (fn == "currenttimestamp" || fn == "currentdate" || fn == "currenttime") {
    if (!t.elements.empty()) return Status::InvalidArgument(fn + "() takes no arguments");
    millis = ctx.now_micros / 1000;
  } else if (fn == "totimestamp" || fn == "tounixtimestamp" || fn == "todate") {
    if (t.elements.size() != 1) return Status::InvalidArgument(fn + " takes one argument");
    TESSERA_ASSIGN_OR_RETURN(millis, MillisOfArgument(t.elements[0], receiver, ctx));
  } else {
    return Status::InvalidArgument("Unknown function '" + t.function_name + "'");
  }
  if (fn == "currenttimestamp" || fn == "totimestamp") {
    TESSERA_RETURN_IF_ERROR(expect(TypeKind::kTimestamp));
    PutBigEndian64(&b.bytes, static_cast<uint64_t>(millis));
  } else if (fn == "tounixtimestamp") {
    TESSERA_RETURN_IF_ERROR(expect(TypeKind::kBigint));
    PutBigEndian64(&b.bytes, static_cast<uint64_t>(millis));
  } else if (fn == "currentdate" || fn == "todate") {
    TESSERA_RETURN_IF_ERROR(expect(TypeKind::kDate));
    int64_t days = millis >= 0 ? millis / 86'400'000 : -((-millis + 86'399'999) / 86'400'000);
    PutBigEndian32(&b.bytes, static_cast<uint32_t>(days + (int64_t{1} << 31)));
  } else {  // currenttime
    TESSERA_RETURN_IF_ERROR(expect(TypeKind::kTime));
    int64_t ms_of_day = ((millis % 86'400'000) + 86'400'000) % 86'400'000;
    PutBigEndian64(&b.bytes, static_cast<uint64_t>(ms_of_day * 1'000'000));
  }
  return b;
}

bool NeedsBinding(const Term& t) {
  if (t.kind == Term::Kind::kBindMarker || t.kind == Term::Kind::kFunctionCall || t.kind == Term::Kind::kOperation) return true;
  for (const auto& e : t.elements) {
    if (NeedsBinding(e)) return true;
  }
  for (const auto& e : t.map_values) {
    if (NeedsBinding(e)) return true;
  }
  return false;
}

// A collection or tuple literal with markers or calls inside: bind each element.
Result<Value> BindNested(const Term& t, const CqlType& type, const std::string& receiver, const BindContext& ctx) {
  auto element = [&](const Term& e, const CqlType& et) -> Result<Value> {
    TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(e, et, receiver, ctx));
    if (b.kind != BoundValue::Kind::kValue) {
      if (type.IsTupleLike()) return Value();
      return Status::InvalidArgument("null is not supported inside collections (\"" + receiver + "\")");
    }
    return Deserialize(et, b.bytes);
  };
  const auto& p = type.params();
  std::vector<Value> items;
  if (type.kind() == TypeKind::kMap) {
    std::vector<std::pair<Value, Value>> entries;
    for (size_t i = 0; i < t.map_values.size(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(Value k, element(t.elements[i], p[0]));
      TESSERA_ASSIGN_OR_RETURN(Value v, element(t.map_values[i], p[1]));
      entries.emplace_back(std::move(k), std::move(v));
    }
    return Value::Map(std::move(entries));
  }
  for (size_t i = 0; i < t.elements.size(); ++i) {
    const CqlType& et = type.IsTupleLike() ? p.at(std::min(i, p.size() - 1)) : p[0];
    if (type.IsTupleLike() && i >= p.size()) return Status::InvalidArgument("too many tuple components");
    TESSERA_ASSIGN_OR_RETURN(Value v, element(t.elements[i], et));
    items.push_back(std::move(v));
  }
  return Value::List(std::move(items));
}

}  // namespace

std::mt19937_64& ThreadRandom() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

std::string MakeTimeUuid(int64_t micros, std::mt19937_64& rng) {
  return ::tessera::MakeTimeUuid(micros, rng());
}

// `l op r` or `-v` for a receiver of `type` (arithmetic.h): the operands
// take the receiver's type (a timestamp's or date's right operand a
// duration); a null operand gives null.
static Result<BoundValue> BindOperation(const Term& t, const CqlType& type, const std::string& receiver, const BindContext& ctx) {
  const bool temporal = type.kind() == TypeKind::kTimestamp || type.kind() == TypeKind::kDate;
  const CqlType operand = type.kind() == TypeKind::kCounter ? CqlType::Scalar(TypeKind::kBigint) : type;
  if (t.elements.size() == 1) {
    TESSERA_ASSIGN_OR_RETURN(BoundValue v, BindTerm(t.elements[0], operand, receiver, ctx));
    if (v.kind != BoundValue::Kind::kValue) return BoundValue{};
    TESSERA_ASSIGN_OR_RETURN(v.bytes, Negate(operand, v.bytes));
    return v;
  }
  if (t.elements.size() != 2 || t.function_name.size() != 1) return Status::InvalidArgument("Invalid operation");
  const char op = t.function_name[0];
  const CqlType right = temporal ? CqlType::Scalar(TypeKind::kDuration) : operand;
  TESSERA_RETURN_IF_ERROR(OperationType(op, operand, right).status());
  TESSERA_ASSIGN_OR_RETURN(BoundValue l, BindTerm(t.elements[0], operand, receiver, ctx));
  TESSERA_ASSIGN_OR_RETURN(BoundValue r, BindTerm(t.elements[1], right, receiver, ctx));
  if (l.kind != BoundValue::Kind::kValue || r.kind != BoundValue::Kind::kValue) return BoundValue{};
  BoundValue out;
  out.kind = BoundValue::Kind::kValue;
  TESSERA_ASSIGN_OR_RETURN(out.bytes, EvaluateOperation(op, operand, l.bytes, right, r.bytes));
  return out;
}

Result<BoundValue> BindTerm(const Term& t, const CqlType& type, const std::string& receiver, const BindContext& ctx) {
  if (t.kind == Term::Kind::kBindMarker) {
    if (!ctx.values || t.bind_index >= static_cast<int>(ctx.values->size())) {
      return Status::InvalidArgument("There were " + std::to_string(ctx.values ? ctx.values->size() : 0) +
                                     " markers(?) in CQL but fewer values were bound");
    }
    const WireValue& w = (*ctx.values)[static_cast<size_t>(t.bind_index)];
    BoundValue b;
    if (w.kind == WireValue::Kind::kNull) return b;
    if (w.kind == WireValue::Kind::kUnset) {
      b.kind = BoundValue::Kind::kUnset;
      return b;
    }
    Status valid = ValidateSerialized(type, w.bytes);
    if (!valid.ok()) return Status::InvalidArgument("Exception while binding column " + receiver + ": " + valid.message());
    b.kind = BoundValue::Kind::kValue;
    b.bytes = w.bytes;
    return b;
  }
  if (t.kind == Term::Kind::kFunctionCall) return CallFunction(t, type, receiver, ctx);
  if (t.kind == Term::Kind::kOperation) return BindOperation(t, type, receiver, ctx);
  if (t.kind == Term::Kind::kUserType && type.kind() != TypeKind::kUdt) {
    return Status::InvalidArgument("Invalid user type literal for " + receiver + " of type " + type.ToCql());
  }
  if (type.kind() == TypeKind::kUdt && NeedsBinding(t)) {
    TESSERA_ASSIGN_OR_RETURN(Term positional, UserTypeLiteralAsTuple(t, type, receiver));
    TESSERA_ASSIGN_OR_RETURN(Value v, BindNested(positional, type, receiver, ctx));
    return Serialized(type, v);
  }
  if (NeedsBinding(t) && (type.IsCollection() || type.IsTupleLike())) {
    TESSERA_ASSIGN_OR_RETURN(Value v, BindNested(t, type, receiver, ctx));
    return Serialized(type, v);
  }
  TESSERA_ASSIGN_OR_RETURN(Value v, LiteralToValue(t, type, receiver));
  return Serialized(type, v);
}

std::optional<CqlType> BlobConversionType(const std::string& function, bool* to_blob) {
  return NativeOfBlobConversion(function, to_blob);
}

}  // namespace tessera::cql
