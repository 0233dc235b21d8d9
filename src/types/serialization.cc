#include "types/serialization.h"

#include <cstring>

#include "common/bytes.h"

namespace tessera {
namespace {

Status TypeError(const CqlType& type, const std::string& what) {
  return Status::InvalidArgument("invalid " + type.ToCql() + " value: " + what);
}

void PutFixed(std::string* out, uint64_t v, int width) { PutBigEndian(out, v, width); }
uint64_t GetFixed(std::string_view b) { return GetBigEndian(b); }

int64_t SignExtend(uint64_t v, int width) {
  int shift = 64 - width * 8;
  return static_cast<int64_t>(v << shift) >> shift;
}

bool IsMinimalVarint(std::string_view b) {
  if (b.empty()) return false;
  if (b.size() == 1) return true;
  auto b0 = static_cast<unsigned char>(b[0]), b1 = static_cast<unsigned char>(b[1]);
  return !((b0 == 0x00 && (b1 & 0x80) == 0) || (b0 == 0xFF && (b1 & 0x80) != 0));
}

Status SerializeCollection(const CqlType& type, const Value& value, std::string* out);
Status SerializeVector(const CqlType& type, const Value& value, std::string* out);

Status SerializeScalar(const CqlType& type, const Value& value, std::string* out) {
  const auto& s = value.storage();
  auto need = [&](auto* dummy) -> bool {
    using T = std::remove_pointer_t<decltype(dummy)>;
    return std::holds_alternative<T>(s);
  };
  auto int_in = [&](int64_t lo, int64_t hi) -> Status {
    if (!need(static_cast<int64_t*>(nullptr))) return TypeError(type, "expected an integer");
    int64_t v = value.as_int();
    if (v < lo || v > hi) return TypeError(type, "out of range: " + std::to_string(v));
    return Status::OK();
  };
  switch (type.kind()) {
    case TypeKind::kBoolean:
      if (!need(static_cast<bool*>(nullptr))) return TypeError(type, "expected a boolean");
      out->push_back(value.as_bool() ? 1 : 0);
      return Status::OK();
    case TypeKind::kTinyint:
      TESSERA_RETURN_IF_ERROR(int_in(INT8_MIN, INT8_MAX));
      PutFixed(out, static_cast<uint64_t>(value.as_int()), 1);
      return Status::OK();
    case TypeKind::kSmallint:
      TESSERA_RETURN_IF_ERROR(int_in(INT16_MIN, INT16_MAX));
      PutFixed(out, static_cast<uint64_t>(value.as_int()), 2);
      return Status::OK();
    case TypeKind::kInt:
      TESSERA_RETURN_IF_ERROR(int_in(INT32_MIN, INT32_MAX));
      PutFixed(out, static_cast<uint64_t>(value.as_int()), 4);
      return Status::OK();
    case TypeKind::kDate:
      TESSERA_RETURN_IF_ERROR(int_in(0, UINT32_MAX));
      PutFixed(out, static_cast<uint64_t>(value.as_int()), 4);
      return Status::OK();
    case TypeKind::kTime:
      TESSERA_RETURN_IF_ERROR(int_in(0, 86'399'999'999'999LL));
      PutFixed(out, static_cast<uint64_t>(value.as_int()), 8);
      return Status::OK();
    case TypeKind::kBigint:
    case TypeKind::kCounter:
    case TypeKind::kTimestamp:
      TESSERA_RETURN_IF_ERROR(int_in(INT64_MIN, INT64_MAX));
      PutFixed(out, static_cast<uint64_t>(value.as_int()), 8);
      return Status::OK();
    case TypeKind::kFloat: {
      if (!need(static_cast<float*>(nullptr))) return TypeError(type, "expected a float");
      float f = value.as_float();
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      PutFixed(out, bits, 4);
      return Status::OK();
    }
    case TypeKind::kDouble: {
      if (!need(static_cast<double*>(nullptr))) return TypeError(type, "expected a double");
      double d = value.as_double();
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      PutFixed(out, bits, 8);
      return Status::OK();
    }
    case TypeKind::kAscii:
    case TypeKind::kText:
    case TypeKind::kBlob:
    case TypeKind::kUuid:
    case TypeKind::kTimeuuid:
    case TypeKind::kInet:
    case TypeKind::kVarint: {
      if (!need(static_cast<std::string*>(nullptr))) return TypeError(type, "expected bytes");
      const std::string& b = value.as_bytes();
      TESSERA_RETURN_IF_ERROR(ValidateSerialized(type, b));
      out->append(b);
      return Status::OK();
    }
    case TypeKind::kDecimal: {
      if (!need(static_cast<Decimal*>(nullptr))) return TypeError(type, "expected a decimal");
      const Decimal& d = value.as_decimal();
      if (!IsMinimalVarint(d.unscaled)) return TypeError(type, "unscaled value is not a minimal varint");
      PutFixed(out, static_cast<uint32_t>(d.scale), 4);
      out->append(d.unscaled);
      return Status::OK();
    }
    case TypeKind::kDuration: {
      if (!need(static_cast<Duration*>(nullptr))) return TypeError(type, "expected a duration");
      const Duration& d = value.as_duration();
      bool neg = d.months < 0 || d.days < 0 || d.nanoseconds < 0;
      bool pos = d.months > 0 || d.days > 0 || d.nanoseconds > 0;
      if (neg && pos) return TypeError(type, "months, days and nanoseconds must have one sign");
      PutProtocolVint(out, d.months);
      PutProtocolVint(out, d.days);
      PutProtocolVint(out, d.nanoseconds);
      return Status::OK();
    }
    default:
      return SerializeCollection(type, value, out);
  }
}

void PutInt32(std::string* out, int32_t v) { PutFixed(out, static_cast<uint32_t>(v), 4); }

Status SerializeElement(const CqlType& type, const Value& v, std::string* out) {
  if (v.is_null()) return Status::InvalidArgument("null is not allowed inside a " + type.ToCql());
  std::string tmp;
  TESSERA_RETURN_IF_ERROR(Serialize(type, v, &tmp));
  PutInt32(out, static_cast<int32_t>(tmp.size()));
  out->append(tmp);
  return Status::OK();
}

Status SerializeCollection(const CqlType& type, const Value& value, std::string* out) {
  switch (type.kind()) {
    case TypeKind::kList:
    case TypeKind::kSet: {
      if (!std::holds_alternative<Elements>(value.storage())) return TypeError(type, "expected elements");
      const auto& items = value.as_elements();
      PutInt32(out, static_cast<int32_t>(items.size()));
      for (const auto& item : items) TESSERA_RETURN_IF_ERROR(SerializeElement(type.params()[0], item, out));
      return Status::OK();
    }
    case TypeKind::kMap: {
      if (!std::holds_alternative<Entries>(value.storage())) return TypeError(type, "expected map entries");
      const auto& items = value.as_entries();
      PutInt32(out, static_cast<int32_t>(items.size()));
      for (const auto& [k, v] : items) {
        TESSERA_RETURN_IF_ERROR(SerializeElement(type.params()[0], k, out));
        TESSERA_RETURN_IF_ERROR(SerializeElement(type.params()[1], v, out));
      }
      return Status::OK();
    }
    case TypeKind::kVector:
      return SerializeVector(type, value, out);
    case TypeKind::kTuple: case TypeKind::kUdt: {
      if (!std::holds_alternative<Elements>(value.storage())) return TypeError(type, "expected components");
      const auto& items = value.as_elements();
      if (items.size() > type.params().size()) return TypeError(type, "too many components");
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].is_null()) {
          PutInt32(out, -1);
          continue;
        }
        TESSERA_RETURN_IF_ERROR(SerializeElement(type.params()[i], items[i], out));
      }
      return Status::OK();
    }
    default:
      return TypeError(type, "unsupported type");
  }
}

// Reads [int n] / [bytes] structures for collections and tuples.
class CollectionReader {
 public:
  CollectionReader(const CqlType& type, std::string_view b) : type_(type), r_(b) {}
  Status Count(int32_t* n) {
    uint32_t u;
    if (!r_.ReadBigEndian32(&u)) return Err("truncated element count");
    *n = static_cast<int32_t>(u);
    if (*n < 0) return Err("negative element count");
    if (static_cast<size_t>(*n) > r_.remaining() / 4) return Err("element count exceeds input");
    return Status::OK();
  }
  // *null set when the length is negative (tuples only).
  Status Element(std::string_view* e, bool* null) {
    uint32_t u;
    if (!r_.ReadBigEndian32(&u)) return Err("truncated element length");
    auto len = static_cast<int32_t>(u);
    *null = len < 0;
    if (*null) return Status::OK();
    if (!r_.ReadBytes(static_cast<size_t>(len), e)) return Err("truncated element");
    return Status::OK();
  }
  Status Finish() { return r_.empty() ? Status::OK() : Err("trailing bytes"); }
  bool AtEnd() const { return r_.empty(); }

 private:
  Status Err(const std::string& what) {
    return Status::InvalidArgument("invalid " + type_.ToCql() + " value: " + what + " at byte " +
                                   std::to_string(r_.position()));
  }
  const CqlType& type_;
  ByteReader r_;
};

Result<Value> DeserializeElement(const CqlType& elem, CollectionReader* cr, bool allow_null) {
  std::string_view e;
  bool null = false;
  TESSERA_RETURN_IF_ERROR(cr->Element(&e, &null));
  if (null) {
    if (allow_null) return Value();
    return Status::InvalidArgument("null element in " + elem.ToCql() + " collection");
  }
  return Deserialize(elem, e);
}

Result<Value> DeserializeCollection(const CqlType& type, std::string_view bytes) {
  CollectionReader cr(type, bytes);
  if (type.IsTupleLike()) {
    std::vector<Value> parts;
    for (const auto& p : type.params()) {
      if (cr.AtEnd()) break;  // trailing components may be omitted: they are null
      TESSERA_ASSIGN_OR_RETURN(Value v, DeserializeElement(p, &cr, true));
      parts.push_back(std::move(v));
    }
    TESSERA_RETURN_IF_ERROR(cr.Finish());
    return Value::List(std::move(parts));
  }
  int32_t n = 0;
  TESSERA_RETURN_IF_ERROR(cr.Count(&n));
  if (type.kind() == TypeKind::kMap) {
    std::vector<std::pair<Value, Value>> entries;
    for (int32_t i = 0; i < n; ++i) {
      TESSERA_ASSIGN_OR_RETURN(Value k, DeserializeElement(type.params()[0], &cr, false));
      TESSERA_ASSIGN_OR_RETURN(Value v, DeserializeElement(type.params()[1], &cr, false));
      entries.emplace_back(std::move(k), std::move(v));
    }
    TESSERA_RETURN_IF_ERROR(cr.Finish());
    return Value::Map(std::move(entries));
  }
  std::vector<Value> items;
  for (int32_t i = 0; i < n; ++i) {
    TESSERA_ASSIGN_OR_RETURN(Value v, DeserializeElement(type.params()[0], &cr, false));
    items.push_back(std::move(v));
  }
  TESSERA_RETURN_IF_ERROR(cr.Finish());
  return Value::List(std::move(items));
}

bool ReadUnsignedVint(ByteReader* r, uint64_t* out) {
  uint8_t first;
  if (!r->ReadByte(&first)) return false;
  int extra = 0;
  while (extra < 8 && (first & (0x80 >> extra))) ++extra;
  uint64_t v = extra == 8 ? 0 : (first & (0xFF >> (extra + 1)));
  for (int i = 0; i < extra; ++i) {
    uint8_t b;
    if (!r->ReadByte(&b)) return false;
    v = (v << 8) | b;
  }
  *out = v;
  return true;
}

bool ReadProtocolVint(ByteReader* r, int64_t* out) {
  uint64_t v;
  if (!ReadUnsignedVint(r, &v)) return false;
  *out = static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);  // zig-zag
  return true;
}

void PutUnsignedVint(std::string* out, uint64_t v) {
  int bits = 64 - __builtin_clzll(v | 1);
  int size = bits > 56 ? 9 : (bits - 1) / 7 + 1;
  int extra = size - 1;
  if (size == 9) {
    out->push_back(static_cast<char>(0xFF));
    PutFixed(out, v, 8);
    return;
  }
  std::string tmp;
  PutFixed(&tmp, v, size);
  tmp[0] = static_cast<char>(static_cast<unsigned char>(tmp[0]) | (~(0xFFu >> extra) & 0xFFu));
  out->append(tmp);
}

// vector<element, n>: the elements back to back, each preceded by its length
// (unsigned vint) unless the element type has a fixed size.
Status SerializeVector(const CqlType& type, const Value& value, std::string* out) {
  if (!std::holds_alternative<Elements>(value.storage())) return TypeError(type, "expected elements");
  const auto& items = value.as_elements();
  if (items.size() != type.dimension()) {
    return TypeError(type, "expected " + std::to_string(type.dimension()) + " elements, got " + std::to_string(items.size()));
  }
  const CqlType& element = type.params()[0];
  const bool fixed = FixedValueSize(element).has_value();
  for (const auto& item : items) {
    if (item.is_null()) return Status::InvalidArgument("null is not allowed inside a " + type.ToCql());
    std::string tmp;
    TESSERA_RETURN_IF_ERROR(Serialize(element, item, &tmp));
    if (!fixed) PutUnsignedVint(out, tmp.size());
    out->append(tmp);
  }
  return Status::OK();
}

Result<Value> DeserializeVector(const CqlType& type, std::string_view b) {
  const CqlType& element = type.params()[0];
  std::vector<Value> items;
  items.reserve(type.dimension());
  if (auto width = FixedValueSize(element)) {
    if (b.size() != *width * type.dimension()) {
      return TypeError(type, "expected " + std::to_string(*width * type.dimension()) + " bytes, got " +
                                 std::to_string(b.size()));
    }
    for (uint32_t i = 0; i < type.dimension(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(element, b.substr(i * *width, *width)));
      items.push_back(std::move(v));
    }
    return Value::List(std::move(items));
  }
  ByteReader r(b);
  for (uint32_t i = 0; i < type.dimension(); ++i) {
    uint64_t len;
    std::string_view e;
    if (!ReadUnsignedVint(&r, &len) || len > r.remaining() || !r.ReadBytes(static_cast<size_t>(len), &e)) {
      return TypeError(type, "truncated element " + std::to_string(i));
    }
    TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(element, e));
    items.push_back(std::move(v));
  }
  if (!r.empty()) return TypeError(type, "trailing bytes");
  return Value::List(std::move(items));
}

}  // namespace

void PutProtocolVint(std::string* out, int64_t signed_value) {
  PutUnsignedVint(out, (static_cast<uint64_t>(signed_value) << 1) ^ static_cast<uint64_t>(signed_value >> 63));
}

Status Serialize(const CqlType& type, const Value& value, std::string* out) {
  if (value.is_null()) return TypeError(type, "null has no serialized form");
  return SerializeScalar(type, value, out);
}

Status ValidateSerialized(const CqlType& type, std::string_view b) {
  if (type.kind() == TypeKind::kVector) return DeserializeVector(type, b).status();
  const std::optional<size_t> width = FixedValueSize(type);
  if (width && b.size() != *width) {
    return TypeError(type, "expected " + std::to_string(*width) + " bytes, got " + std::to_string(b.size()));
  }
  switch (type.kind()) {
    case TypeKind::kAscii:
      for (size_t i = 0; i < b.size(); ++i) {
        if (static_cast<unsigned char>(b[i]) > 0x7F) return TypeError(type, "non-ASCII byte at offset " + std::to_string(i));
      }
      return Status::OK();
    case TypeKind::kText:
      return IsValidUtf8(b) ? Status::OK() : TypeError(type, "not valid UTF-8");
    case TypeKind::kTimeuuid:
      if ((static_cast<unsigned char>(b[6]) >> 4) != 1) return TypeError(type, "not a version 1 UUID");
      return Status::OK();
    case TypeKind::kInet:
      return b.size() == 4 || b.size() == 16 ? Status::OK() : TypeError(type, "expected 4 or 16 bytes");
    case TypeKind::kVarint:
      return IsMinimalVarint(b) ? Status::OK() : TypeError(type, "not a minimal two's-complement integer");
    case TypeKind::kTime: {
      auto v = static_cast<int64_t>(GetFixed(b));
      return v >= 0 && v <= 86'399'999'999'999LL ? Status::OK() : TypeError(type, "outside one day");
    }
    case TypeKind::kDecimal:
      if (b.size() < 5 || !IsMinimalVarint(b.substr(4))) return TypeError(type, "malformed decimal");
      return Status::OK();
    case TypeKind::kDuration:
    case TypeKind::kList:
    case TypeKind::kSet:
    case TypeKind::kMap:
    case TypeKind::kTuple: case TypeKind::kUdt:
      return Deserialize(type, b).status();
    default:
      return Status::OK();
  }
}

Result<Value> Deserialize(const CqlType& type, std::string_view b) {
  if (type.kind() == TypeKind::kVector) return DeserializeVector(type, b);
  if (type.kind() != TypeKind::kDuration && !type.IsCollection() && !type.IsTupleLike()) {
    TESSERA_RETURN_IF_ERROR(ValidateSerialized(type, b));
  }
  switch (type.kind()) {
    case TypeKind::kBoolean: return Value::Boolean(b[0] != 0);
    case TypeKind::kTinyint: return Value::Int(SignExtend(GetFixed(b), 1));
    case TypeKind::kSmallint: return Value::Int(SignExtend(GetFixed(b), 2));
    case TypeKind::kInt: return Value::Int(SignExtend(GetFixed(b), 4));
    case TypeKind::kDate: return Value::Int(static_cast<int64_t>(GetFixed(b)));
    case TypeKind::kBigint: case TypeKind::kCounter: case TypeKind::kTimestamp: case TypeKind::kTime:
      return Value::Int(static_cast<int64_t>(GetFixed(b)));
    case TypeKind::kFloat: {
      auto bits = static_cast<uint32_t>(GetFixed(b));
      float f;
      std::memcpy(&f, &bits, 4);
      return Value::Float(f);
    }
    case TypeKind::kDouble: {
      uint64_t bits = GetFixed(b);
      double d;
      std::memcpy(&d, &bits, 8);
      return Value::Double(d);
    }
    case TypeKind::kDecimal:
      return Value(Decimal{static_cast<int32_t>(GetFixed(b.substr(0, 4))), std::string(b.substr(4))});
    case TypeKind::kDuration: {
      ByteReader r(b);
      int64_t months, days, nanos;
      if (!ReadProtocolVint(&r, &months) || !ReadProtocolVint(&r, &days) || !ReadProtocolVint(&r, &nanos) ||
          !r.empty() || months < INT32_MIN || months > INT32_MAX || days < INT32_MIN || days > INT32_MAX) {
        return TypeError(type, "malformed duration");
      }
      return Value(Duration{static_cast<int32_t>(months), static_cast<int32_t>(days), nanos});
    }
    case TypeKind::kList: case TypeKind::kSet: case TypeKind::kMap: case TypeKind::kTuple: case TypeKind::kUdt:
      return DeserializeCollection(type, b);
    default:
      return Value::Bytes(std::string(b));
  }
}

std::optional<std::string> SerializedComponent(std::string_view value, size_t index) {
  size_t pos = 0;
  for (size_t i = 0;; ++i) {
    if (pos + 4 > value.size()) return std::nullopt;
    const auto len = static_cast<int32_t>(GetFixed(value.substr(pos, 4)));
    pos += 4;
    if (len < 0) {
      if (i == index) return std::nullopt;
      continue;
    }
    if (pos + static_cast<size_t>(len) > value.size()) return std::nullopt;
    if (i == index) return std::string(value.substr(pos, static_cast<size_t>(len)));
    pos += static_cast<size_t>(len);
  }
}

}  // namespace tessera
