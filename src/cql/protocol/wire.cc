#include "cql/protocol/wire.h"

#include "common/bytes.h"

namespace tessera::cql {

bool WireReader::Take(size_t n, std::string_view* out) {
  if (body_.size() - pos_ < n) return false;
  *out = body_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool WireReader::Byte(uint8_t* v) {
  std::string_view b;
  if (!Take(1, &b)) return false;
  *v = static_cast<uint8_t>(b[0]);
  return true;
}

bool WireReader::Short(uint16_t* v) {
  std::string_view b;
  if (!Take(2, &b)) return false;
  *v = GetBigEndian16(b.data());
  return true;
}

bool WireReader::Int(int32_t* v) {
  std::string_view b;
  if (!Take(4, &b)) return false;
  *v = static_cast<int32_t>(GetBigEndian32(b.data()));
  return true;
}

bool WireReader::Long(int64_t* v) {
  std::string_view b;
  if (!Take(8, &b)) return false;
  *v = static_cast<int64_t>(GetBigEndian64(b.data()));
  return true;
}

bool WireReader::String(std::string* v) {
  uint16_t n;
  std::string_view b;
  if (!Short(&n) || !Take(n, &b)) return false;
  v->assign(b);
  return true;
}

bool WireReader::LongString(std::string* v) {
  int32_t n;
  std::string_view b;
  if (!Int(&n) || n < 0 || !Take(static_cast<size_t>(n), &b)) return false;
  v->assign(b);
  return true;
}

bool WireReader::ShortBytes(std::string* v) { return String(v); }

bool WireReader::Bytes(std::optional<std::string>* v) {
  int32_t n;
  if (!Int(&n)) return false;
  if (n < 0) {
    v->reset();
    return true;
  }
  std::string_view b;
  if (!Take(static_cast<size_t>(n), &b)) return false;
  v->emplace(b);
  return true;
}

bool WireReader::Value(WireValue* v) {
  int32_t n;
  if (!Int(&n)) return false;
  if (n == -1 || n == -2) {
    v->kind = n == -1 ? WireValue::Kind::kNull : WireValue::Kind::kUnset;
    v->bytes.clear();
    return true;
  }
  std::string_view b;
  if (n < 0 || !Take(static_cast<size_t>(n), &b)) return false;
  v->kind = WireValue::Kind::kBytes;
  v->bytes.assign(b);
  return true;
}

bool WireReader::StringList(std::vector<std::string>* v) {
  uint16_t n;
  if (!Short(&n)) return false;
  v->clear();
  for (uint16_t i = 0; i < n; ++i) {
    std::string s;
    if (!String(&s)) return false;
    v->push_back(std::move(s));
  }
  return true;
}

bool WireReader::StringMap(std::map<std::string, std::string>* v) {
  uint16_t n;
  if (!Short(&n)) return false;
  v->clear();
  for (uint16_t i = 0; i < n; ++i) {
    std::string k, val;
    if (!String(&k) || !String(&val)) return false;
    (*v)[k] = val;
  }
  return true;
}

bool WireReader::BytesMap(std::map<std::string, std::optional<std::string>>* v) {
  uint16_t n;
  if (!Short(&n)) return false;
  v->clear();
  for (uint16_t i = 0; i < n; ++i) {
    std::string k;
    std::optional<std::string> val;
    if (!String(&k) || !Bytes(&val)) return false;
    (*v)[k] = val;
  }
  return true;
}

void WireWriter::Short(uint16_t v) { PutBigEndian16(&out_, v); }
void WireWriter::Int(int32_t v) { PutBigEndian32(&out_, static_cast<uint32_t>(v)); }
void WireWriter::Long(int64_t v) { PutBigEndian64(&out_, static_cast<uint64_t>(v)); }

void WireWriter::String(std::string_view v) {
  Short(static_cast<uint16_t>(v.size()));
  out_.append(v);
}

void WireWriter::LongString(std::string_view v) {
  Int(static_cast<int32_t>(v.size()));
  out_.append(v);
}

void WireWriter::ShortBytes(std::string_view v) { String(v); }

void WireWriter::Bytes(std::string_view v) {
  Int(static_cast<int32_t>(v.size()));
  out_.append(v);
}

void WireWriter::StringList(const std::vector<std::string>& v) {
  Short(static_cast<uint16_t>(v.size()));
  for (const auto& s : v) String(s);
}

void WireWriter::StringMultimap(const std::map<std::string, std::vector<std::string>>& v) {
  Short(static_cast<uint16_t>(v.size()));
  for (const auto& [k, list] : v) {
    String(k);
    StringList(list);
  }
}

void WireWriter::Inet(std::string_view address, int32_t port) {
  Byte(static_cast<uint8_t>(address.size()));
  out_.append(address);
  Int(port);
}

}  // namespace tessera::cql
