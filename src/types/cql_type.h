// CQL data types (native protocol v4 §4.2.5.2 option ids; §6 value formats).
//
// A CqlType is a plain value: a kind plus, for collections and tuples, the
// element types, plus whether it is frozen. TypeKind values are the protocol's
// [option] ids and are FROZEN ON THE WIRE; they are also written into the
// persisted catalog by name (see schema_json.h), never by number.
//
// Thread safety: immutable after construction; safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera {

enum class TypeKind : uint16_t {
  kAscii = 0x0001,
  kBigint = 0x0002,
  kBlob = 0x0003,
  kBoolean = 0x0004,
  kCounter = 0x0005,
  kDecimal = 0x0006,
  kDouble = 0x0007,
  kFloat = 0x0008,
  kInt = 0x0009,
  kTimestamp = 0x000B,
  kUuid = 0x000C,
  kText = 0x000D,  // "varchar" in the spec; text and varchar are one type
  kVarint = 0x000E,
  kTimeuuid = 0x000F,
  kInet = 0x0010,
  kDate = 0x0011,
  kTime = 0x0012,
  kSmallint = 0x0013,
  kTinyint = 0x0014,
  kDuration = 0x0015,
  kList = 0x0020,
  kMap = 0x0021,
  kSet = 0x0022,
  kTuple = 0x0031,
};

class CqlType {
 public:
  // A scalar type. REQUIRES: kind is not list/map/set/tuple.
  static CqlType Scalar(TypeKind kind);
  static CqlType List(CqlType element, bool frozen);
  static CqlType Set(CqlType element, bool frozen);
  static CqlType Map(CqlType key, CqlType value, bool frozen);
  static CqlType Tuple(std::vector<CqlType> components);  // tuples are always frozen

  // Parses a CQL type name such as "int", "varchar", "frozen<map<text, list<int>>>",
  // "tuple<int, text>". Case-insensitive, spaces allowed. Collections nested
  // inside a collection or tuple must be frozen, as in Cassandra.
  // Errors: InvalidArgument naming the offending text.
  static Result<CqlType> Parse(std::string_view text);

  TypeKind kind() const { return kind_; }
  bool frozen() const { return frozen_; }
  // Element types: list/set: [element]; map: [key, value]; tuple: components.
  const std::vector<CqlType>& params() const { return params_; }

  bool IsCollection() const;            // list, set or map (frozen or not)
  bool IsMultiCell() const;             // non-frozen collection: stored one cell per element
  // True if the type may be a partition-key or clustering column (frozen
  // values of orderable types; never duration, counter or a non-frozen collection).
  bool IsKeyable() const;

  // Canonical CQL spelling: "text", "frozen<list<int>>", "tuple<int, text>".
  std::string ToCql() const;

  bool operator==(const CqlType& other) const;
  bool operator!=(const CqlType& other) const { return !(*this == other); }

 private:
  CqlType(TypeKind kind, bool frozen, std::vector<CqlType> params)
      : kind_(kind), frozen_(frozen), params_(std::move(params)) {}
  TypeKind kind_ = TypeKind::kInt;
  bool frozen_ = true;
  std::vector<CqlType> params_;
};

}  // namespace tessera
