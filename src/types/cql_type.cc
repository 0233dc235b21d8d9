#include "types/cql_type.h"

#include <algorithm>
#include <cctype>
#include <utility>

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
  explicit TypeParser(std::string_view text) : text_(text) {}

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
  std::string Word() {
    SkipSpaces();
    std::string w;
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
    return Error("unknown type '" + w + "'");
  }

  static constexpr int kMaxDepth = 32;  // user input: bound the recursion
  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
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

Result<CqlType> CqlType::Parse(std::string_view text) { return TypeParser(text).ParseAll(); }

bool CqlType::IsCollection() const {
  return kind_ == TypeKind::kList || kind_ == TypeKind::kSet || kind_ == TypeKind::kMap;
}

bool CqlType::IsMultiCell() const { return IsCollection() && !frozen_; }

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
  return kind_ == other.kind_ && frozen_ == other.frozen_ && params_ == other.params_;
}

}  // namespace tessera
