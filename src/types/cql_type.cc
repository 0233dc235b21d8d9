#include "types/cql_type.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "types/schema.h"

namespace tessera {
namespace {

struct ScalarName {
  const char* name;
  TypeKind kind;
};

// Accepted spellings; the first entry for a kind is its canonical name.
constexpr ScalarName kScalarNames[] = {
    {"ascii", TypeKind::kAscii},       {"bigint", TypeKind::kBigint},
    {"blob", TypeKind::kBlob},         {"boolean", TypeKind::kBoolean},
    {"counter", TypeKind::kCounter},   {"decimal", TypeKind::kDecimal},
    {"double", TypeKind::kDouble},     {"float", TypeKind::kFloat},
    {"int", TypeKind::kInt},           {"timestamp", TypeKind::kTimestamp},
    {"uuid", TypeKind::kUuid},         {"text", TypeKind::kText},
    {"varchar", TypeKind::kText},      {"varint", TypeKind::kVarint},
    {"timeuuid", TypeKind::kTimeuuid}, {"inet", TypeKind::kInet},
    {"date", TypeKind::kDate},         {"time", TypeKind::kTime},
    {"smallint", TypeKind::kSmallint}, {"tinyint", TypeKind::kTinyint},
    {"duration", TypeKind::kDuration},
};

class TypeParser {
 public:
  TypeParser(std::string_view text, const UserTypeLookup* user_types) : text_(text), user_types_(user_types) {}

  Result<CqlType> ParseAll() {
    auto t = ParseType(/*nested=*/false);
    if (!t.ok()) return t;
    SkipSpaces();
    if (pos_ != text_.size()) return Error("unexpected text");
    return t;
  }

 private:
  Status Error(const std::string& what) const {
    return Status::InvalidArgument("invalid type '" + std::string(text_) + "': " + what +
                                   " at offset " + std::to_string(pos_));
  }
  void SkipSpaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  // An identifier, lower-cased; a "quoted" one kept as written (quoted_ set).
  std::string Word() {
    SkipSpaces();
    std::string w;
    quoted_ = pos_ < text_.size() && text_[pos_] == '"';
    if (quoted_) {
      for (++pos_; pos_ < text_.size(); ++pos_) {
        if (text_[pos_] == '"') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
            w.push_back('"');
            ++pos_;
            continue;
          }
          ++pos_;
          break;
        }
        w.push_back(text_[pos_]);
      }
      return w;
    }
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      w.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_++]))));
    }
    return w;
  }
  bool Consume(char c) {
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  // `nested`: inside a collection or tuple, where collections must be frozen;
  // `in_frozen`: inside frozen<...>, which freezes everything nested in it.
  Result<CqlType> ParseType(bool nested, bool frozen = false, bool in_frozen = false) {
    if (++depth_ > kMaxDepth) return Error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    struct Exit {
      int* d;
      ~Exit() { --*d; }
    } exit{&depth_};
    std::string w = Word();
    if (w.empty()) return Error("expected a type name");
    if (quoted_) return UserType(w, nested, frozen, in_frozen);
    if (w == "frozen") {
      if (!Consume('<')) return Error("expected '<' after frozen");
      auto inner = ParseType(nested, /*frozen=*/true, /*in_frozen=*/true);
      if (!inner.ok()) return inner;
      if (!Consume('>')) return Error("expected '>'");
      return inner;
    }
    if (w == "list" || w == "set" || w == "map") {
      frozen = frozen || in_frozen;
      if (nested && !frozen) return Error("non-frozen collections are not allowed inside collections");
      if (!Consume('<')) return Error("expected '<' after " + w);
      auto first = ParseType(true, false, in_frozen);
      if (!first.ok()) return first;
      if (w == "map") {
        if (!Consume(',')) return Error("expected ',' in map<key, value>");
        auto second = ParseType(true, false, in_frozen);
        if (!second.ok()) return second;
        if (!Consume('>')) return Error("expected '>'");
        return CqlType::Map(std::move(first).value(), std::move(second).value(), frozen);
      }
      if (!Consume('>')) return Error("expected '>'");
      return w == "list" ? CqlType::List(std::move(first).value(), frozen)
                         : CqlType::Set(std::move(first).value(), frozen);
    }
    if (w == "tuple") {
      if (!Consume('<')) return Error("expected '<' after tuple");
      std::vector<CqlType> parts;
      do {
        auto p = ParseType(true, false, /*in_frozen=*/true);  // tuples are frozen
        if (!p.ok()) return p;
        parts.push_back(std::move(p).value());
      } while (Consume(','));
      if (!Consume('>')) return Error("expected '>'");
      return CqlType::Tuple(std::move(parts));
    }
    for (const auto& s : kScalarNames) {
      if (w == s.name) {
        if (frozen) return Error("frozen<> applies only to collections and tuples");
        return CqlType::Scalar(s.kind);
      }
    }
    return UserType(w, nested, frozen, in_frozen);
  }

  // `name` [. name]: a user-defined type, looked up.
  Result<CqlType> UserType(std::string name, bool nested, bool frozen, bool in_frozen) {
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == '.') {  // keyspace.type
      ++pos_;
      std::string type_name = Word();
      if (type_name.empty()) return Error("expected a type name after '.'");
      name += "." + type_name;
    }
    std::optional<CqlType> found = user_types_ ? (*user_types_)(name) : std::nullopt;
    if (!found) return Error("unknown type '" + name + "'");
    frozen = frozen || in_frozen;
    if (nested && !frozen) return Error("non-frozen user types are not allowed inside collections, tuples or user types");
    return found->WithFrozen(frozen);
  }

  static constexpr int kMaxDepth = 32;  // user input: bound the recursion
  std::string_view text_;
  const UserTypeLookup* user_types_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool quoted_ = false;
};

}  // namespace

CqlType CqlType::Scalar(TypeKind kind) { return CqlType(kind, true, {}); }
CqlType CqlType::List(CqlType element, bool frozen) {
  return CqlType(TypeKind::kList, frozen, {std::move(element)});
}
CqlType CqlType::Set(CqlType element, bool frozen) {
  return CqlType(TypeKind::kSet, frozen, {std::move(element)});
}
CqlType CqlType::Map(CqlType key, CqlType value, bool frozen) {
  return CqlType(TypeKind::kMap, frozen, {std::move(key), std::move(value)});
}
CqlType CqlType::Tuple(std::vector<CqlType> components) {
  return CqlType(TypeKind::kTuple, true, std::move(components));
}

CqlType CqlType::UserType(std::string keyspace, std::string name, std::vector<std::string> field_names,
                          std::vector<CqlType> field_types, bool frozen) {
  CqlType t(TypeKind::kUdt, frozen, std::move(field_types));
  t.udt_keyspace_ = std::move(keyspace);
  t.udt_name_ = std::move(name);
  t.field_names_ = std::move(field_names);
  return t;
}

Result<CqlType> CqlType::Parse(std::string_view text, const UserTypeLookup* user_types) {
  return TypeParser(text, user_types).ParseAll();
}

CqlType CqlType::WithFrozen(bool frozen) const {
  CqlType t = *this;
  if (kind_ == TypeKind::kUdt || IsCollection()) t.frozen_ = frozen;
  return t;
}

bool CqlType::References(const std::string& keyspace, const std::string& name) const {
  if (kind_ == TypeKind::kUdt && udt_keyspace_ == keyspace && udt_name_ == name) return true;
  return std::any_of(params_.begin(), params_.end(), [&](const CqlType& p) { return p.References(keyspace, name); });
}

CqlType CqlType::ReplaceUserType(const CqlType& updated) const {
  if (kind_ == TypeKind::kUdt && udt_keyspace_ == updated.udt_keyspace_ && udt_name_ == updated.udt_name_) {
    return updated.WithFrozen(frozen_);
  }
  CqlType t = *this;
  for (auto& p : t.params_) p = p.ReplaceUserType(updated);
  return t;
}

bool CqlType::IsCollection() const {
  return kind_ == TypeKind::kList || kind_ == TypeKind::kSet || kind_ == TypeKind::kMap;
}

bool CqlType::IsMultiCell() const { return (IsCollection() || kind_ == TypeKind::kUdt) && !frozen_; }

bool CqlType::IsKeyable() const {
  if (kind_ == TypeKind::kDuration || kind_ == TypeKind::kCounter) return false;
  if (IsMultiCell()) return false;
  return std::all_of(params_.begin(), params_.end(), [](const CqlType& p) { return p.IsKeyable(); });
}

std::string CqlType::ToCql() const {
  switch (kind_) {
    case TypeKind::kList:
    case TypeKind::kSet: {
      std::string s = std::string(kind_ == TypeKind::kList ? "list<" : "set<") + params_[0].ToCql() + ">";
      return frozen_ ? "frozen<" + s + ">" : s;
    }
    case TypeKind::kMap: {
      std::string s = "map<" + params_[0].ToCql() + ", " + params_[1].ToCql() + ">";
      return frozen_ ? "frozen<" + s + ">" : s;
    }
    case TypeKind::kUdt:
      return frozen_ ? "frozen<" + QuoteIdentifier(udt_name_) + ">" : QuoteIdentifier(udt_name_);
    case TypeKind::kTuple: {
      // Tuples are always frozen; Cassandra spells them so in its schema tables.
      std::string s = "frozen<tuple<";
      for (size_t i = 0; i < params_.size(); ++i) s += (i ? ", " : "") + params_[i].ToCql();
      return s + ">>";
    }
    default:
      for (const auto& n : kScalarNames) {
        if (n.kind == kind_) return n.name;
      }
      return "unknown";
  }
}

bool CqlType::operator==(const CqlType& other) const {
  return kind_ == other.kind_ && frozen_ == other.frozen_ && params_ == other.params_ &&
         udt_keyspace_ == other.udt_keyspace_ && udt_name_ == other.udt_name_ && field_names_ == other.field_names_;
}

std::string UserTypeFieldPath(size_t index) {
  return std::string{static_cast<char>((index >> 8) & 0xFF), static_cast<char>(index & 0xFF)};
}

std::optional<size_t> UserTypeFieldOfPath(std::string_view path) {
  if (path.size() != 2) return std::nullopt;
  return (static_cast<size_t>(static_cast<unsigned char>(path[0])) << 8) | static_cast<unsigned char>(path[1]);
}

std::optional<size_t> UserTypeFieldIndex(const CqlType& type, std::string_view name) {
  const auto& names = type.field_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  return std::nullopt;
}

}  // namespace tessera
