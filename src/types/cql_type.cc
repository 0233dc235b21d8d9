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

constexpr std::pair<TypeKind, const char*> kMarshalClasses[] = {
      {TypeKind::kAscii, "AsciiType"},         {TypeKind::kBigint, "LongType"},
      {TypeKind::kBlob, "BytesType"},          {TypeKind::kBoolean, "BooleanType"},
      {TypeKind::kCounter, "CounterColumnType"}, {TypeKind::kDecimal, "DecimalType"},
      {TypeKind::kDouble, "DoubleType"},       {TypeKind::kFloat, "FloatType"},
      {TypeKind::kInt, "Int32Type"},           {TypeKind::kTimestamp, "TimestampType"},
      {TypeKind::kUuid, "UUIDType"},           {TypeKind::kText, "UTF8Type"},
      {TypeKind::kVarint, "IntegerType"},      {TypeKind::kTimeuuid, "TimeUUIDType"},
      {TypeKind::kInet, "InetAddressType"},    {TypeKind::kDate, "SimpleDateType"},
      {TypeKind::kTime, "TimeType"},           {TypeKind::kSmallint, "ShortType"},
      {TypeKind::kTinyint, "ByteType"},        {TypeKind::kDuration, "DurationType"},
};
constexpr std::string_view kMarshalPrefix = "org.apache.cassandra.db.marshal.";

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
    if (w == "vector") return VectorType(in_frozen);
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

  // After "vector": <element, dimension>. Elements are frozen values (a
  // collection element is frozen, as in a tuple); the dimension a positive
  // integer up to kMaxVectorDimension.
  Result<CqlType> VectorType(bool in_frozen) {
    if (!Consume('<')) return Error("expected '<' after vector");
    auto element = ParseType(/*nested=*/true, false, /*in_frozen=*/true);  // elements are frozen, as a tuple's
    if (!element.ok()) return element;
    if (element->kind() == TypeKind::kCounter) return Error("vectors may not contain counters");
    if (element->kind() == TypeKind::kUdt) return Error("vectors of user types are not supported");
    if (!Consume(',')) return Error("expected ',' in vector<type, dimension>");
    SkipSpaces();
    uint64_t dimension = 0;
    const size_t digits_at = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) && dimension <= kMaxVectorDimension) {
      dimension = dimension * 10 + static_cast<uint64_t>(text_[pos_++] - '0');
    }
    if (pos_ == digits_at) return Error("expected the vector's dimension");
    if (dimension == 0) return Error("vectors may only have positive dimensions; given 0");
    if (dimension > kMaxVectorDimension) {
      return Error("vectors may have at most " + std::to_string(kMaxVectorDimension) + " dimensions");
    }
    if (!Consume('>')) return Error("expected '>'");
    return CqlType::Vector(std::move(element).value(), static_cast<uint32_t>(dimension));
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
  static constexpr uint64_t kMaxVectorDimension = 8192;  // Cassandra's SAI limit on indexed vectors
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

CqlType CqlType::Vector(CqlType element, uint32_t dimension) {
  CqlType t(TypeKind::kVector, true, {std::move(element)});
  t.dimension_ = dimension;
  return t;
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
  if (kind_ == TypeKind::kDuration || kind_ == TypeKind::kCounter || kind_ == TypeKind::kVector) return false;
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
    case TypeKind::kVector:
      return "vector<" + params_[0].ToCql() + ", " + std::to_string(dimension_) + ">";
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
         udt_keyspace_ == other.udt_keyspace_ && udt_name_ == other.udt_name_ && field_names_ == other.field_names_ &&
         dimension_ == other.dimension_;
}

std::optional<size_t> FixedValueSize(const CqlType& type) {
  switch (type.kind()) {
    case TypeKind::kBoolean: case TypeKind::kTinyint: return 1;
    case TypeKind::kSmallint: return 2;
    case TypeKind::kInt: case TypeKind::kFloat: case TypeKind::kDate: return 4;
    case TypeKind::kBigint: case TypeKind::kDouble: case TypeKind::kTimestamp: case TypeKind::kTime:
    case TypeKind::kCounter: return 8;
    case TypeKind::kUuid: case TypeKind::kTimeuuid: return 16;
    case TypeKind::kVector: {
      auto element = FixedValueSize(type.params()[0]);
      if (!element) return std::nullopt;
      return *element * type.dimension();
    }
    default: return std::nullopt;
  }
}

std::string MarshalClassName(const CqlType& type) {
  const std::string prefix(kMarshalPrefix);
  auto params = [&](const char* name) {
    std::string s = prefix + name + "(";
    for (size_t i = 0; i < type.params().size(); ++i) s += (i ? "," : "") + MarshalClassName(type.params()[i]);
    return s + ")";
  };
  std::string name;
  switch (type.kind()) {
    case TypeKind::kList: name = params("ListType"); break;
    case TypeKind::kSet: name = params("SetType"); break;
    case TypeKind::kMap: name = params("MapType"); break;
    case TypeKind::kTuple: return params("TupleType");
    case TypeKind::kVector:
      return prefix + "VectorType(" + MarshalClassName(type.params()[0]) + "," + std::to_string(type.dimension()) + ")";
    default:
      for (const auto& [kind, cls] : kMarshalClasses) {
        if (kind == type.kind()) return prefix + cls;
      }
      return prefix + "BytesType";
  }
  return type.frozen() ? prefix + "FrozenType(" + name + ")" : name;
}

Result<CqlType> ParseMarshalClassName(std::string_view name) {
  auto invalid = [&] { return Status::InvalidArgument("unsupported type class '" + std::string(name) + "'"); };
  auto strip = [](std::string_view n) { return n.substr(0, kMarshalPrefix.size()) == kMarshalPrefix ? n.substr(kMarshalPrefix.size()) : n; };
  std::string_view n = strip(name);
  constexpr std::string_view kVectorClass = "VectorType(";
  if (n.substr(0, kVectorClass.size()) == kVectorClass && n.back() == ')') {
    std::string_view inner = n.substr(kVectorClass.size(), n.size() - kVectorClass.size() - 1);
    const size_t comma = inner.rfind(',');
    if (comma == std::string_view::npos) return invalid();
    TESSERA_ASSIGN_OR_RETURN(CqlType element, ParseMarshalClassName(inner.substr(0, comma)));
    std::string_view digits = inner.substr(comma + 1);
    uint64_t dimension = 0;
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c)) || dimension > 1'000'000) return invalid();
      dimension = dimension * 10 + static_cast<uint64_t>(c - '0');
    }
    if (digits.empty() || dimension == 0 || dimension > 1'000'000) return invalid();
    return CqlType::Vector(std::move(element), static_cast<uint32_t>(dimension));
  }
  for (const auto& [kind, cls] : kMarshalClasses) {
    if (n == cls) return CqlType::Scalar(kind);
  }
  return invalid();
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
