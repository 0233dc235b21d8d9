#include "keys/key_encoding.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/bytes.h"
#include "types/decimal_digits.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera {
namespace {

// Markers inside encodings (FROZEN ON DISK).
constexpr char kEscape = '\x00';       // text/blob: 0x00 is written as 0x00 0xFF
constexpr char kEscapedZero = '\xFF';
constexpr char kTerminator = '\x01';   // text/blob end: 0x00 0x01
constexpr char kEndOfSequence = '\x00';  // frozen list/set/map end
constexpr char kElement = '\x01';        // frozen list/set/map element follows
constexpr char kNullComponent = '\x01';  // tuple component is null
constexpr char kPresentComponent = '\x02';
constexpr unsigned char kNegative = 0x7F, kZero = 0x80, kPositive = 0x81;  // varint/decimal sign

uint64_t ReadFixed(std::string_view b) { return GetBigEndian(b); }
void PutFixed(std::string* out, uint64_t v, int width) { PutBigEndian(out, v, width); }

void PutEscaped(std::string* out, std::string_view b) {
  for (char c : b) {
    out->push_back(c);
    if (c == kEscape) out->push_back(kEscapedZero);
  }
  out->push_back(kEscape);
  out->push_back(kTerminator);
}

void Invert(std::string* out, size_t from) {
  for (size_t i = from; i < out->size(); ++i) (*out)[i] = static_cast<char>(~static_cast<unsigned char>((*out)[i]));
}

uint64_t FloatingKey(uint64_t bits, int width) {
  uint64_t sign = uint64_t{1} << (width * 8 - 1);
  uint64_t mask = width == 8 ? ~uint64_t{0} : ((uint64_t{1} << (width * 8)) - 1);
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

uint64_t CanonicalFloatBits(std::string_view b) {
  if (b.size() == 4) {
    uint32_t bits = static_cast<uint32_t>(ReadFixed(b));
    float f;
    std::memcpy(&f, &bits, 4);
    if (f != f) bits = 0x7fc00000u;  // Java's canonical NaN
    return bits;
  }
  uint64_t bits = ReadFixed(b);
  double d;
  std::memcpy(&d, &bits, 8);
  if (d != d) bits = 0x7ff8000000000000ULL;
  return bits;
}

struct SerializedElements {
  std::vector<std::string_view> items;  // tuples: null components are absent values (see nulls)
  std::vector<bool> nulls;
};

Status ParseElements(const CqlType& type, std::string_view b, SerializedElements* out) {
  ByteReader r(b);
  uint32_t n = 0;
  bool tuple = type.IsTupleLike();
  if (!tuple && !r.ReadBigEndian32(&n)) return Status::InvalidArgument("truncated collection");
  while (tuple ? !r.empty() : out->items.size() < n * (type.kind() == TypeKind::kMap ? 2u : 1u)) {
    uint32_t len;
    if (!r.ReadBigEndian32(&len)) return Status::InvalidArgument("truncated element length");
    if (static_cast<int32_t>(len) < 0) {
      if (!tuple) return Status::InvalidArgument("null element in collection");
      out->items.emplace_back();
      out->nulls.push_back(true);
      continue;
    }
    std::string_view e;
    if (!r.ReadBytes(len, &e)) return Status::InvalidArgument("truncated element");
    out->items.push_back(e);
    out->nulls.push_back(false);
  }
  if (!r.empty()) return Status::InvalidArgument("trailing bytes in collection");
  if (tuple && out->items.size() > type.params().size()) return Status::InvalidArgument("too many tuple components");
  return Status::OK();
}

Status EncodeAsc(const CqlType& type, std::string_view b, std::string* out);

Status EncodeCollection(const CqlType& type, std::string_view b, std::string* out) {
  SerializedElements el;
  TESSERA_RETURN_IF_ERROR(ParseElements(type, b, &el));
  if (type.IsTupleLike()) {
    // A tuple encodes every component. A user type may gain fields (ALTER TYPE
    // ADD), so it encodes its fields up to the last non-null one, then an end
    // marker: a key written before the type grew stays the same key.
    const bool udt = type.kind() == TypeKind::kUdt;
    size_t count = type.params().size();
    if (udt) {
      count = el.items.size();
      while (count > 0 && el.nulls[count - 1]) --count;
    }
    for (size_t i = 0; i < count; ++i) {
      if (i >= el.items.size() || el.nulls[i]) {
        out->push_back(kNullComponent);
        continue;
      }
      out->push_back(kPresentComponent);
      TESSERA_RETURN_IF_ERROR(EncodeAsc(type.params()[i], el.items[i], out));
    }
    if (udt) out->push_back(kEndOfSequence);
    return Status::OK();
  }
  // Encode each element (map: key then value), then order sets and maps by
  // the encoded key, which is their typed order.
  bool is_map = type.kind() == TypeKind::kMap;
  std::vector<std::pair<std::string, std::string>> encoded;
  for (size_t i = 0; i < el.items.size(); i += is_map ? 2 : 1) {
    std::pair<std::string, std::string> e;
    TESSERA_RETURN_IF_ERROR(EncodeAsc(type.params()[0], el.items[i], &e.first));
    if (is_map) TESSERA_RETURN_IF_ERROR(EncodeAsc(type.params()[1], el.items[i + 1], &e.second));
    encoded.push_back(std::move(e));
  }
  if (type.kind() != TypeKind::kList) {
    std::stable_sort(encoded.begin(), encoded.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    encoded.erase(std::unique(encoded.begin(), encoded.end(),
                              [](const auto& x, const auto& y) { return x.first == y.first; }),
                  encoded.end());
  }
  for (const auto& [k, v] : encoded) {
    out->push_back(kElement);
    out->append(k);
    out->append(v);
  }
  out->push_back(kEndOfSequence);
  return Status::OK();
}

void EncodeVarintMagnitude(std::string_view b, std::string* out) {
  bool negative = static_cast<unsigned char>(b[0]) & 0x80;
  // Magnitude bytes without leading zeros.
  std::string mag(b);
  if (negative) NegateTwosComplement(&mag);
  size_t lead = 0;
  while (lead < mag.size() && mag[lead] == 0) ++lead;
  mag.erase(0, lead);
  if (mag.empty()) {
    out->push_back(static_cast<char>(kZero));
    return;
  }
  out->push_back(static_cast<char>(negative ? kNegative : kPositive));
  size_t body = out->size();
  PutFixed(out, mag.size(), 4);
  out->append(mag);
  if (negative) Invert(out, body);
}

void EncodeDecimal(std::string_view b, std::string* out) {
  Decimal d{static_cast<int32_t>(ReadFixed(b.substr(0, 4))), std::string(b.substr(4))};
  DecimalDigits n = ToDecimalDigits(d);
  uint32_t scale_key = static_cast<uint32_t>(d.scale) ^ 0x80000000u;
  if (n.sign == 0) {
    out->push_back(static_cast<char>(kZero));
    PutFixed(out, scale_key, 4);
    return;
  }
  out->push_back(static_cast<char>(n.sign > 0 ? kPositive : kNegative));
  size_t body = out->size();
  PutFixed(out, static_cast<uint64_t>(n.exponent) ^ 0x8000000000000000ULL, 8);
  for (char c : n.digits) out->push_back(static_cast<char>(c - '0' + 1));
  out->push_back('\0');
  PutFixed(out, scale_key, 4);
  if (n.sign < 0) Invert(out, body);
}

Status EncodeAsc(const CqlType& type, std::string_view b, std::string* out) {
  if (!type.IsKeyable()) return Status::InvalidArgument(type.ToCql() + " cannot be part of a key");
  if (type.kind() != TypeKind::kText && type.kind() != TypeKind::kAscii && type.kind() != TypeKind::kBlob &&
      b.empty()) {
    return Status::InvalidArgument("empty " + type.ToCql() + " value in a key");
  }
  if (type.IsCollection() || type.IsTupleLike()) return EncodeCollection(type, b, out);
  TESSERA_RETURN_IF_ERROR(ValidateSerialized(type, b));
  switch (type.kind()) {
    case TypeKind::kBoolean: out->push_back(b[0] != 0 ? 1 : 0); return Status::OK();
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt:
    case TypeKind::kBigint: case TypeKind::kTimestamp: case TypeKind::kTime: {
      uint64_t sign = uint64_t{1} << (b.size() * 8 - 1);
      PutFixed(out, ReadFixed(b) ^ sign, static_cast<int>(b.size()));
      return Status::OK();
    }
    case TypeKind::kDate: out->append(b); return Status::OK();
    case TypeKind::kFloat: case TypeKind::kDouble: {
      int w = static_cast<int>(b.size());
      PutFixed(out, FloatingKey(CanonicalFloatBits(b), w), w);
      return Status::OK();
    }
    case TypeKind::kUuid: {
      int version = static_cast<unsigned char>(b[6]) >> 4;
      out->push_back(static_cast<char>(version));
      if (version == 1) PutFixed(out, UuidTimestamp(b), 8);
      out->append(b);
      return Status::OK();
    }
    case TypeKind::kTimeuuid:
      PutFixed(out, UuidTimestamp(b), 8);
      for (int i = 8; i < 16; ++i) out->push_back(static_cast<char>(b[i] ^ 0x80));
      return Status::OK();
    case TypeKind::kVarint: EncodeVarintMagnitude(b, out); return Status::OK();
    case TypeKind::kDecimal: EncodeDecimal(b, out); return Status::OK();
    default:  // ascii, text, blob, inet
      PutEscaped(out, b);
      return Status::OK();
  }
}

// Reads an encoded component, undoing DESC inversion byte by byte.
class KeyReader {
 public:
  KeyReader(std::string_view* in, bool invert) : in_(in), invert_(invert) {}
  bool Byte(unsigned char* c) {
    if (pos_ >= in_->size()) return false;
    *c = static_cast<unsigned char>((*in_)[pos_++]) ^ (invert_ ? 0xFF : 0x00);
    return true;
  }
  bool Bytes(size_t n, std::string* out) {
    if (in_->size() - pos_ < n) return false;
    for (size_t i = 0; i < n; ++i) out->push_back(static_cast<char>(static_cast<unsigned char>((*in_)[pos_ + i]) ^ (invert_ ? 0xFF : 0)));
    pos_ += n;
    return true;
  }
  bool Peek(unsigned char* c) const {
    if (pos_ >= in_->size()) return false;
    *c = static_cast<unsigned char>((*in_)[pos_]) ^ (invert_ ? 0xFF : 0x00);
    return true;
  }
  void Commit() { in_->remove_prefix(pos_); }
  // Toggles inversion (negative numbers are stored inverted).
  void Flip() { invert_ = !invert_; }

 private:
  std::string_view* in_;
  bool invert_;
  size_t pos_ = 0;
};

Status Corrupt(const CqlType& type, const char* what) {
  return Status::Corruption("malformed " + type.ToCql() + " key component: " + what);
}

Status DecodeAsc(const CqlType& type, KeyReader* r, std::string* out);

void PutInt32(std::string* out, int32_t v) { PutFixed(out, static_cast<uint32_t>(v), 4); }

Status DecodeCollection(const CqlType& type, KeyReader* r, std::string* out) {
  if (type.IsTupleLike()) {
    const bool udt = type.kind() == TypeKind::kUdt;
    for (size_t i = 0;; ++i) {
      unsigned char m;
      if (!udt && i == type.params().size()) break;
      if (!r->Byte(&m)) return Corrupt(type, "truncated");
      if (udt && m == static_cast<unsigned char>(kEndOfSequence)) {
        for (; i < type.params().size(); ++i) PutInt32(out, -1);  // every field, as drivers send them
        break;
      }
      if (i == type.params().size()) return Corrupt(type, "more fields than the type has");
      const CqlType& p = type.params()[i];
      if (m == static_cast<unsigned char>(kNullComponent)) {
        PutInt32(out, -1);
        continue;
      }
      if (m != static_cast<unsigned char>(kPresentComponent)) return Corrupt(type, "bad component marker");
      std::string e;
      TESSERA_RETURN_IF_ERROR(DecodeAsc(p, r, &e));
      PutInt32(out, static_cast<int32_t>(e.size()));
      out->append(e);
    }
    return Status::OK();
  }
  std::string body;
  int32_t n = 0;
  for (;;) {
    unsigned char m;
    if (!r->Byte(&m)) return Corrupt(type, "truncated");
    if (m == static_cast<unsigned char>(kEndOfSequence)) break;
    if (m != static_cast<unsigned char>(kElement)) return Corrupt(type, "bad element marker");
    for (size_t i = 0; i < (type.kind() == TypeKind::kMap ? 2u : 1u); ++i) {
      std::string e;
      TESSERA_RETURN_IF_ERROR(DecodeAsc(type.params()[i], r, &e));
      PutInt32(&body, static_cast<int32_t>(e.size()));
      body.append(e);
    }
    ++n;
  }
  PutInt32(out, n);
  out->append(body);
  return Status::OK();
}

Status DecodeVarint(const CqlType& type, KeyReader* r, std::string* out) {
  unsigned char sign;
  if (!r->Byte(&sign)) return Corrupt(type, "truncated");
  if (sign == kZero) {
    out->push_back('\0');
    return Status::OK();
  }
  if (sign != kNegative && sign != kPositive) return Corrupt(type, "bad sign");
  bool negative = sign == kNegative;
  if (negative) r->Flip();
  std::string len_bytes, mag;
  if (!r->Bytes(4, &len_bytes)) return Corrupt(type, "truncated length");
  uint64_t len = ReadFixed(len_bytes);
  if (len == 0 || !r->Bytes(len, &mag)) return Corrupt(type, "truncated magnitude");
  if (negative) r->Flip();
  bool neg_out;
  std::string digits;
  // Through the decimal helpers to get a minimal two's-complement form.
  std::string positive = mag;
  if (static_cast<unsigned char>(positive[0]) & 0x80) positive.insert(positive.begin(), '\0');
  VarintToDecimalString(positive, &neg_out, &digits);
  out->append(DecimalStringToVarint(negative, digits));
  return Status::OK();
}

Status DecodeDecimal(const CqlType& type, KeyReader* r, std::string* out) {
  unsigned char sign;
  if (!r->Byte(&sign)) return Corrupt(type, "truncated");
  DecimalDigits n;
  std::string scale_bytes;
  if (sign == kZero) {
    if (!r->Bytes(4, &scale_bytes)) return Corrupt(type, "truncated scale");
  } else {
    if (sign != kNegative && sign != kPositive) return Corrupt(type, "bad sign");
    n.sign = sign == kPositive ? 1 : -1;
    if (n.sign < 0) r->Flip();
    std::string exp;
    if (!r->Bytes(8, &exp)) return Corrupt(type, "truncated exponent");
    n.exponent = static_cast<int64_t>(ReadFixed(exp) ^ 0x8000000000000000ULL);
    for (;;) {
      unsigned char d;
      if (!r->Byte(&d)) return Corrupt(type, "truncated digits");
      if (d == 0) break;
      if (d > 10) return Corrupt(type, "bad digit");
      n.digits.push_back(static_cast<char>('0' + d - 1));
    }
    if (n.digits.empty() || n.digits[0] == '0') return Corrupt(type, "bad digits");
    if (!r->Bytes(4, &scale_bytes)) return Corrupt(type, "truncated scale");
    if (n.sign < 0) r->Flip();
  }
  auto scale = static_cast<int32_t>(static_cast<uint32_t>(ReadFixed(scale_bytes)) ^ 0x80000000u);
  Decimal d;
  if (!FromDecimalDigits(n, scale, &d)) return Corrupt(type, "digits do not fit the scale");
  PutInt32(out, d.scale);
  out->append(d.unscaled);
  return Status::OK();
}

Status DecodeScalar(const CqlType& type, KeyReader* r, std::string* out);

Status DecodeAsc(const CqlType& type, KeyReader* r, std::string* out) {
  if (type.IsCollection() || type.IsTupleLike()) return DecodeCollection(type, r, out);
  // Strict: what decodes is a value the encoder accepts (valid UTF-8, a 4- or
  // 16-byte inet, a time within a day, ...), never just some bytes.
  const size_t start = out->size();
  TESSERA_RETURN_IF_ERROR(DecodeScalar(type, r, out));
  Status valid = ValidateSerialized(type, std::string_view(*out).substr(start));
  return valid.ok() ? valid : Status::Corruption("key component: " + valid.message());
}

Status DecodeScalar(const CqlType& type, KeyReader* r, std::string* out) {
  switch (type.kind()) {
    case TypeKind::kBoolean: {
      unsigned char c;
      if (!r->Byte(&c) || c > 1) return Corrupt(type, "bad boolean");
      out->push_back(static_cast<char>(c));
      return Status::OK();
    }
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt:
    case TypeKind::kBigint: case TypeKind::kTimestamp: case TypeKind::kTime: {
      size_t w = type.kind() == TypeKind::kTinyint ? 1 : type.kind() == TypeKind::kSmallint ? 2
               : type.kind() == TypeKind::kInt ? 4 : 8;
      std::string b;
      if (!r->Bytes(w, &b)) return Corrupt(type, "truncated");
      b[0] = static_cast<char>(b[0] ^ 0x80);
      out->append(b);
      return Status::OK();
    }
    case TypeKind::kDate:
      return r->Bytes(4, out) ? Status::OK() : Corrupt(type, "truncated");
    case TypeKind::kFloat: case TypeKind::kDouble: {
      int w = type.kind() == TypeKind::kFloat ? 4 : 8;
      std::string b;
      if (!r->Bytes(static_cast<size_t>(w), &b)) return Corrupt(type, "truncated");
      uint64_t key = ReadFixed(b), sign = uint64_t{1} << (w * 8 - 1);
      uint64_t mask = w == 8 ? ~uint64_t{0} : ((uint64_t{1} << (w * 8)) - 1);
      uint64_t bits = (key & sign) ? (key & ~sign) : (~key & mask);
      PutFixed(out, bits, w);
      return Status::OK();
    }
    case TypeKind::kUuid: {
      unsigned char version;
      if (!r->Byte(&version) || version > 15) return Corrupt(type, "bad version");
      std::string skip, raw;
      if (version == 1 && !r->Bytes(8, &skip)) return Corrupt(type, "truncated");
      if (!r->Bytes(16, &raw)) return Corrupt(type, "truncated");
      out->append(raw);
      return Status::OK();
    }
    case TypeKind::kTimeuuid: {
      std::string ts, lsb;
      if (!r->Bytes(8, &ts) || !r->Bytes(8, &lsb)) return Corrupt(type, "truncated");
      uint64_t t = ReadFixed(ts);
      if (t >> 60) return Corrupt(type, "timestamp out of range");
      uint32_t time_low = static_cast<uint32_t>(t);
      uint16_t time_mid = static_cast<uint16_t>(t >> 32);
      uint16_t time_hi = static_cast<uint16_t>((t >> 48) & 0x0FFF) | 0x1000;
      PutFixed(out, time_low, 4);
      PutFixed(out, time_mid, 2);
      PutFixed(out, time_hi, 2);
      for (char c : lsb) out->push_back(static_cast<char>(c ^ 0x80));
      return Status::OK();
    }
    case TypeKind::kVarint: return DecodeVarint(type, r, out);
    case TypeKind::kDecimal: return DecodeDecimal(type, r, out);
    default: {  // escaped bytes
      for (;;) {
        unsigned char c;
        if (!r->Byte(&c)) return Corrupt(type, "unterminated");
        if (c != 0) {
          out->push_back(static_cast<char>(c));
          continue;
        }
        unsigned char next;
        if (!r->Byte(&next)) return Corrupt(type, "unterminated");
        if (next == static_cast<unsigned char>(kTerminator)) break;
        if (next != static_cast<unsigned char>(kEscapedZero)) return Corrupt(type, "bad escape");
        out->push_back('\0');
      }
      return Status::OK();
    }
  }
}

}  // namespace

Status EncodeKeyComponent(const CqlType& type, std::string_view serialized, SortOrder order, std::string* out) {
  size_t start = out->size();
  Status s = EncodeAsc(type, serialized, out);
  if (!s.ok()) {
    out->resize(start);
    return s;
  }
  if (order == SortOrder::kDesc) Invert(out, start);
  return Status::OK();
}

Status DecodeKeyComponent(const CqlType& type, SortOrder order, std::string_view* in, std::string* serialized) {
  KeyReader r(in, order == SortOrder::kDesc);
  size_t start = serialized->size();
  Status s = DecodeAsc(type, &r, serialized);
  if (!s.ok()) {
    serialized->resize(start);
    return s;
  }
  r.Commit();
  return Status::OK();
}

}  // namespace tessera
