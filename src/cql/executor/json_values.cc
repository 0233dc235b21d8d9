#include "cql/executor/json_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "types/schema.h"
#include "types/serialization.h"
#include "types/value_format.h"

namespace tessera::cql {
namespace {

using json = nlohmann::json;

std::string Quote(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

template <typename F>
std::string FloatJson(F f) {
  if (std::isnan(f)) return "\"NaN\"";
  if (std::isinf(f)) return f > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), f);
  return std::string(buf, r.ptr);
}

// `bytes`: the value's serialized form when the caller has it (top level),
// so that scalars are not serialized again for FormatValue.
std::string ValueJson(const CqlType& type, const Value& v, const std::string* bytes = nullptr);

std::string Join(const CqlType& type, const std::vector<Value>& items, const std::vector<CqlType>* per_item) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    const CqlType& t = per_item ? (*per_item)[i] : type;
    out += items[i].is_null() ? "null" : ValueJson(t, items[i]);
  }
  return out + "]";
}

std::string ValueJson(const CqlType& type, const Value& v, const std::string* serialized) {
  if (v.is_null()) return "null";
  std::string bytes;
  switch (type.kind()) {
    case TypeKind::kText: case TypeKind::kAscii: return Quote(v.as_bytes());
    case TypeKind::kBoolean: return v.as_bool() ? "true" : "false";
    case TypeKind::kFloat: return FloatJson(v.as_float());
    case TypeKind::kDouble: return FloatJson(v.as_double());
    case TypeKind::kList: case TypeKind::kSet: case TypeKind::kVector:
      return Join(type.params()[0], v.as_elements(), nullptr);
    case TypeKind::kTuple: return Join(type, v.as_elements(), &type.params());
    case TypeKind::kUdt: {  // an object of every field, as Cassandra's toJson
      std::string out = "{";
      const auto& items = v.as_elements();
      for (size_t i = 0; i < type.params().size(); ++i) {
        const Value& field = i < items.size() ? items[i] : Value();
        out += (i ? ", " : "") + Quote(QuoteIdentifier(type.field_names()[i])) + ": " + ValueJson(type.params()[i], field);
      }
      return out + "}";
    }
    case TypeKind::kMap: {
      std::string out = "{";
      for (size_t i = 0; i < v.as_entries().size(); ++i) {
        const auto& [k, val] = v.as_entries()[i];
        if (i > 0) out += ", ";
        std::string key = ValueJson(type.params()[0], k);
        out += key.empty() || key[0] != '"' ? Quote(key) : key;
        out += ": " + (val.is_null() ? std::string("null") : ValueJson(type.params()[1], val));
      }
      return out + "}";
    }
    default: break;
  }
  if (serialized == nullptr && !Serialize(type, v, &bytes).ok()) return "null";
  const std::string shown = FormatValue(type, serialized != nullptr ? *serialized : bytes);
  switch (type.kind()) {
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kCounter: case TypeKind::kVarint: case TypeKind::kDecimal:
      return shown;
    case TypeKind::kTimestamp:  // cqlsh's 'yyyy-mm-dd HH:MM:SS.ffffff+0000' -> milliseconds and Z
      return Quote(shown.size() >= 23 ? shown.substr(0, 23) + "Z" : shown);
    default:
      return Quote(shown);
  }
}

const char* JsonKindName(const json& j) {
  switch (j.type()) {
    case json::value_t::string: return "String";
    case json::value_t::boolean: return "Boolean";
    case json::value_t::number_integer: case json::value_t::number_unsigned: return "Integer";
    case json::value_t::number_float: return "Double";
    case json::value_t::array: return "ArrayList";
    case json::value_t::object: return "LinkedHashMap";
    default: return "null";
  }
}

Status Decoding(const std::string& receiver, const std::string& detail) {
  return Status::InvalidArgument("Error decoding JSON value for " + receiver + ": " + detail);
}

Status Expected(const std::string& receiver, const std::string& what, const json& j) {
  return Decoding(receiver, "Expected " + what + ", but got a " + JsonKindName(j) + ": " + j.dump());
}

Term Literal(Term::Kind kind, std::string text) {
  Term t;
  t.kind = kind;
  t.text = std::move(text);
  return t;
}

// A number given as a JSON number or a string, as an integer or float
// literal; a string that is not a number is refused as Cassandra does.
Result<Term> NumberTerm(const json& j, const CqlType& type, const std::string& receiver) {
  if (j.is_number_float()) return Literal(Term::Kind::kFloat, j.dump());
  if (j.is_number()) return Literal(Term::Kind::kInteger, j.dump());
  std::string s = j.get<std::string>();
  const size_t digits = s.find_first_not_of("-+") == std::string::npos ? s.size() : s.find_first_not_of("-+");
  const bool sign_ok = digits <= 1;
  const bool integer = sign_ok && digits < s.size() && s.find_first_not_of("0123456789", digits) == std::string::npos;
  if (integer) return Literal(Term::Kind::kInteger, s);
  const bool integral_type = type.kind() != TypeKind::kFloat && type.kind() != TypeKind::kDouble &&
                             type.kind() != TypeKind::kDecimal;
  const std::string body = s.substr(std::min(digits, s.size()));
  const bool special = body == "NaN" || body == "Infinity";
  const bool decimal = !body.empty() && body.find_first_not_of("0123456789.eE+-") == std::string::npos &&
                       body.find_first_of("0123456789") != std::string::npos;
  if (integral_type || !sign_ok || !(special || decimal)) {
    return Decoding(receiver, "Unable to make " + type.ToCql() + " from '" + s + "'");
  }
  return Literal(Term::Kind::kFloat, s);
}

Result<Term> ToTerm(const json& j, const CqlType& type, const std::string& receiver) {
  if (j.is_null()) return Literal(Term::Kind::kNull, "");
  switch (type.kind()) {
    case TypeKind::kText: case TypeKind::kAscii:
      if (!j.is_string()) return Expected(receiver, type.kind() == TypeKind::kAscii ? "an ascii string" : "a UTF-8 string", j);
      return Literal(Term::Kind::kString, j.get<std::string>());
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kCounter: case TypeKind::kVarint:
      if (j.is_number_float()) return Decoding(receiver, "Unable to make " + type.ToCql() + " from '" + j.dump() + "'");
      if (!j.is_number() && !j.is_string()) return Expected(receiver, "an integer", j);
      return NumberTerm(j, type, receiver);
    case TypeKind::kFloat: case TypeKind::kDouble: case TypeKind::kDecimal:
      if (!j.is_number() && !j.is_string()) return Expected(receiver, "a number", j);
      return NumberTerm(j, type, receiver);
    case TypeKind::kBoolean:
      if (j.is_boolean()) return Literal(Term::Kind::kBoolean, j.get<bool>() ? "true" : "false");
      if (j.is_string() && (j == "true" || j == "false")) return Literal(Term::Kind::kBoolean, j.get<std::string>());
      return Expected(receiver, "a boolean value", j);
    case TypeKind::kTimestamp: case TypeKind::kDate: case TypeKind::kTime:
      if (j.is_number_integer() || j.is_number_unsigned()) return Literal(Term::Kind::kInteger, j.dump());
      if (!j.is_string()) return Expected(receiver, "a string or an integer", j);
      return Literal(Term::Kind::kString, j.get<std::string>());
    case TypeKind::kUuid: case TypeKind::kTimeuuid:
      if (!j.is_string()) return Expected(receiver, "a string representation of a uuid", j);
      return Literal(Term::Kind::kUuid, j.get<std::string>());
    case TypeKind::kInet:
      if (!j.is_string()) return Expected(receiver, "a string representation of an inet value", j);
      return Literal(Term::Kind::kString, j.get<std::string>());
    case TypeKind::kDuration:
      if (!j.is_string()) return Expected(receiver, "a string representation of a duration", j);
      return Literal(Term::Kind::kDuration, j.get<std::string>());
    case TypeKind::kBlob: {
      if (!j.is_string()) return Expected(receiver, "a hex string representing bytes", j);
      const std::string s = j.get<std::string>();
      if (s.size() < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') ||
          s.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos) {
        return Decoding(receiver, "Value '" + s + "' is not a valid blob representation: String representation of "
                                  "blob is missing 0x prefix: " + s);
      }
      return Literal(Term::Kind::kBlob, s.substr(2));
    }
    case TypeKind::kList: case TypeKind::kSet: case TypeKind::kTuple: case TypeKind::kVector: {
      if (!j.is_array()) return Expected(receiver, type.kind() == TypeKind::kTuple ? "a list representation of a tuple"
                                                    : type.kind() == TypeKind::kSet ? "a list (representing a set)" : "a list", j);
      Term t;
      t.kind = type.kind() == TypeKind::kList || type.kind() == TypeKind::kVector ? Term::Kind::kList : type.kind() == TypeKind::kSet ? Term::Kind::kSet
                                                                                                : Term::Kind::kTuple;
      if (type.kind() == TypeKind::kTuple && j.size() > type.params().size()) {
        return Decoding(receiver, "Tuple contains extra items (expected " + std::to_string(type.params().size()) +
                                  "): " + j.dump());
      }
      for (size_t i = 0; i < j.size(); ++i) {
        const CqlType& element = type.kind() == TypeKind::kTuple ? type.params()[i] : type.params()[0];
        TESSERA_ASSIGN_OR_RETURN(Term e, ToTerm(j[i], element, receiver));
        t.elements.push_back(std::move(e));
      }
      return t;
    }
    case TypeKind::kUdt: {
      if (!j.is_object()) return Expected(receiver, "a map", j);
      Term t;
      t.kind = Term::Kind::kUserType;
      const auto& names = type.field_names();
      for (const auto& [k, v] : j.items()) {
        // Keys are CQL identifiers: "\"Quoted\"" keeps its case, others are lower-cased.
        std::string field = k.size() >= 2 && k.front() == '"' && k.back() == '"' ? k.substr(1, k.size() - 2) : AsciiLower(k);
        auto it = std::find(names.begin(), names.end(), field);
        if (it == names.end()) {
          return Decoding(receiver, "Unknown field '" + field + "' in value of user defined type " + type.udt_name());
        }
        TESSERA_ASSIGN_OR_RETURN(Term vt, ToTerm(v, type.params()[static_cast<size_t>(it - names.begin())], receiver));
        t.field_names.push_back(std::move(field));
        t.elements.push_back(std::move(vt));
      }
      return t;
    }
    case TypeKind::kMap: {
      if (!j.is_object()) return Expected(receiver, "a map", j);
      Term t;
      t.kind = Term::Kind::kMap;
      const CqlType& key_type = type.params()[0];
      const bool string_keys = key_type.kind() == TypeKind::kText || key_type.kind() == TypeKind::kAscii;
      for (const auto& [k, v] : j.items()) {
        json key = k;
        if (!string_keys) {  // a non-string key is its JSON in a string
          json parsed = json::parse(k, nullptr, false);
          if (!parsed.is_discarded()) key = parsed;
        }
        TESSERA_ASSIGN_OR_RETURN(Term kt, ToTerm(key, key_type, receiver));
        TESSERA_ASSIGN_OR_RETURN(Term vt, ToTerm(v, type.params()[1], receiver));
        t.elements.push_back(std::move(kt));
        t.map_values.push_back(std::move(vt));
      }
      return t;
    }
    default:
      return Decoding(receiver, "JSON is not supported for type " + type.ToCql());
  }
}

// nlohmann's parser reads every number as int64, uint64 or double; a
// varint or decimal beyond those would lose digits. Numbers with more
// digits than a double keeps are turned into strings before parsing, which
// the converters accept as numbers (as Cassandra accepts "123" for an int).
std::string QuoteLongNumbers(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') in_string = true;
    if (c != '-' && (c < '0' || c > '9')) {
      out += c;
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && std::string_view("0123456789.eE+-").find(text[end]) != std::string_view::npos) ++end;
    const std::string token = text.substr(i, end - i);
    size_t digits = 0;
    for (char d : token) digits += d >= '0' && d <= '9';
    out += digits > 15 ? "\"" + token + "\"" : token;
    i = end;
  }
  return out;
}

}  // namespace

std::string ValueToJson(const CqlType& type, const std::optional<std::string>& bytes) {
  if (!bytes) return "null";
  auto v = Deserialize(type, *bytes);
  if (!v.ok()) return "null";
  return ValueJson(type, *v, &*bytes);
}

std::string JsonColumnKey(const std::string& name) {
  // Function results (ttl(b), system.tojson(m)) keep their names as they are.
  return name.find('(') != std::string::npos ? name : QuoteIdentifier(name);
}

Result<std::vector<std::pair<std::string, std::string>>> ParseJsonObject(const std::string& text) {
  json j = json::parse(QuoteLongNumbers(text), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("Could not decode JSON string as a map: " + text.substr(0, 200));
  }
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto& [k, v] : j.items()) members.emplace_back(k, v.dump());
  return members;
}

Result<Term> JsonToTerm(const std::string& json_text, const CqlType& type, const std::string& receiver) {
  json j = json::parse(QuoteLongNumbers(json_text), nullptr, false);
  if (j.is_discarded()) return Decoding(receiver, "could not decode JSON: " + json_text.substr(0, 200));
  return ToTerm(j, type, receiver);
}

}  // namespace tessera::cql
