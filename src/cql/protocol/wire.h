// The notations of native protocol v4 §3: [int], [long], [byte], [short],
// [string], [long string], [uuid], [string list], [bytes], [value],
// [short bytes], [inet], [consistency], [string map], [string multimap],
// [bytes map]. All integers are big-endian.
//
// WireReader never reads past its input: every getter returns false when the
// body is too short or a length is negative where it may not be, and the
// caller turns that into a protocol error naming `position()`.
//
// Thread safety: a reader or writer is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cql {

// A bound [value]: bytes, null (length -1) or unset (length -2, §3).
struct WireValue {
  enum class Kind : uint8_t { kBytes, kNull, kUnset };
  Kind kind = Kind::kNull;
  std::string bytes;
  static WireValue Of(std::string b) { return {Kind::kBytes, std::move(b)}; }
  bool operator==(const WireValue&) const = default;
};

class WireReader {
 public:
  explicit WireReader(std::string_view body) : body_(body) {}
  bool Byte(uint8_t* v);
  bool Short(uint16_t* v);
  bool Int(int32_t* v);
  bool Long(int64_t* v);
  bool String(std::string* v);        // [short] n, n bytes
  bool LongString(std::string* v);    // [int] n, n bytes
  bool ShortBytes(std::string* v);    // [short] n, n bytes
  bool Bytes(std::optional<std::string>* v);  // [int] n (< 0: null), n bytes
  bool Value(WireValue* v);           // [int] n: >= 0 bytes, -1 null, -2 unset
  bool StringList(std::vector<std::string>* v);
  bool StringMap(std::map<std::string, std::string>* v);
  bool BytesMap(std::map<std::string, std::optional<std::string>>* v);
  size_t position() const { return pos_; }
  size_t remaining() const { return body_.size() - pos_; }
  bool AtEnd() const { return pos_ == body_.size(); }

 private:
  bool Take(size_t n, std::string_view* out);
  std::string_view body_;
  size_t pos_ = 0;
};

class WireWriter {
 public:
  void Byte(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void Short(uint16_t v);
  void Int(int32_t v);
  void Long(int64_t v);
  void String(std::string_view v);
  void LongString(std::string_view v);
  void ShortBytes(std::string_view v);
  void Bytes(std::string_view v);
  void NullBytes() { Int(-1); }
  void StringList(const std::vector<std::string>& v);
  void StringMultimap(const std::map<std::string, std::vector<std::string>>& v);
  void Inet(std::string_view address_bytes, int32_t port);  // [inet]: size byte, address, [int] port
  void Raw(std::string_view v) { out_.append(v); }
  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace tessera::cql
