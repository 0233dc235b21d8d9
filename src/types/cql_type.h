// CQL data types (native protocol v4 §4.2.5.2 option ids; §6 value formats).
//
// A CqlType is a plain value: a kind plus, for collections and tuples, the
// element types, plus whether it is frozen. A user-defined type (CQL 3 §UDT)
// carries its whole definition: keyspace, name, field names and field types,
// so a value can be read without the catalog; the catalog resolves type names
// when a statement or a stored schema names one (UserTypeLookup). TypeKind values are the protocol's
// [option] ids and are FROZEN ON THE WIRE; they are also written into the
// persisted catalog by name (see schema_json.h), never by number.
//
// Thread safety: immutable after construction; safe to share.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  kUdt = 0x0030,
  kTuple = 0x0031,
  // Not a protocol [option] id: a vector travels as the custom type
  // "org.apache.cassandra.db.marshal.VectorType(<element class>,<n>)"
  // (native protocol v5 §6.24 / Cassandra 5.0's VectorType).
  kVector = 0x0100,
};

class CqlType;
// Resolves a user-defined type name as written in a type ("address" or
// "ks.address", lower-cased unless it was quoted) to the type's definition
// (frozen); nullopt when no such type exists.
using UserTypeLookup = std::function<std::optional<CqlType>(const std::string& name)>;

class CqlType {
 public:
  // A scalar type. REQUIRES: kind is not list/map/set/tuple.
  static CqlType Scalar(TypeKind kind);
  static CqlType List(CqlType element, bool frozen);
  static CqlType Set(CqlType element, bool frozen);
  static CqlType Map(CqlType key, CqlType value, bool frozen);
  static CqlType Tuple(std::vector<CqlType> components);  // tuples are always frozen
  // vector<element, dimension> (Cassandra 5.0): exactly `dimension` non-null
  // elements, one cell (always frozen). REQUIRES: dimension >= 1.
  static CqlType Vector(CqlType element, uint32_t dimension);
  // A user-defined type: field i is named field_names[i] and has type field_types[i].
  // REQUIRES: as many names as types, at least one field.
  static CqlType UserType(std::string keyspace, std::string name, std::vector<std::string> field_names,
                          std::vector<CqlType> field_types, bool frozen);

  // Parses a CQL type name such as "int", "varchar", "frozen<map<text, list<int>>>",
  // "tuple<int, text>". Case-insensitive, spaces allowed. Collections nested
  // inside a collection or tuple must be frozen, as in Cassandra.
  // A name that is neither a native type nor a collection or tuple is looked
  // up with `user_types` (null: no user types): "address" is the non-frozen
  // type, "frozen<address>" the frozen one; a non-frozen user type is not
  // allowed inside a collection, a tuple or another user type.
  // Errors: InvalidArgument naming the offending text.
  static Result<CqlType> Parse(std::string_view text, const UserTypeLookup* user_types = nullptr);

  CqlType(const CqlType&) = default;
  CqlType(CqlType&&) noexcept = default;
  CqlType& operator=(CqlType&&) noexcept = default;
  // Safe when `other` is a part of this type (t = t.params()[0]): copies first.
  CqlType& operator=(const CqlType& other) {
    CqlType copy(other);
    return *this = std::move(copy);
  }

  TypeKind kind() const { return kind_; }
  bool frozen() const { return frozen_; }
  // Element types: list/set/vector: [element]; map: [key, value]; tuple:
  // components; user type: field types.
  const std::vector<CqlType>& params() const { return params_; }
  // User types only (empty otherwise): the keyspace, the type's name and its field names.
  const std::string& udt_keyspace() const { return udt_keyspace_; }
  const std::string& udt_name() const { return udt_name_; }
  const std::vector<std::string>& field_names() const { return field_names_; }
  // Vectors only (0 otherwise): the number of elements.
  uint32_t dimension() const { return dimension_; }
  // The same type, frozen (a user type or a collection) or not.
  CqlType WithFrozen(bool frozen) const;
  // True if this type is, or contains, the user type `keyspace`.`name`.
  bool References(const std::string& keyspace, const std::string& name) const;
  // This type with every occurrence of the user type `updated` names (same
  // keyspace and name) replaced by `updated`'s definition, frozen as it was.
  CqlType ReplaceUserType(const CqlType& updated) const;

  bool IsCollection() const;            // list, set or map (frozen or not)
  // Tuple or user type: a value is a sequence of components (fields), each
  // [bytes] on the wire (native protocol v4 §6.7, §6.8); trailing ones may be omitted (null).
  bool IsTupleLike() const { return kind_ == TypeKind::kTuple || kind_ == TypeKind::kUdt; }
  // Non-frozen collection or user type: stored one cell per element (a
  // user type's cell path is the field's index, 2 bytes big-endian).
  bool IsMultiCell() const;
  // True if the type may be a partition-key or clustering column (frozen
  // values of orderable types; never duration, counter or a non-frozen collection).
  bool IsKeyable() const;

  // Canonical CQL spelling: "text", "frozen<list<int>>", "tuple<int, text>";
  // a user type by its name: "address" or "frozen<address>" (quoted if needed).
  std::string ToCql() const;

  bool operator==(const CqlType& other) const;
  bool operator!=(const CqlType& other) const { return !(*this == other); }

 private:
  CqlType(TypeKind kind, bool frozen, std::vector<CqlType> params)
      : kind_(kind), frozen_(frozen), params_(std::move(params)) {}
  TypeKind kind_ = TypeKind::kInt;
  bool frozen_ = true;
  std::vector<CqlType> params_;
  std::string udt_keyspace_, udt_name_;
  std::vector<std::string> field_names_;
  uint32_t dimension_ = 0;
};

// The serialized size of every value of `type` when it is fixed (Cassandra's
// valueLengthIfFixed: boolean 1, tinyint 1, smallint 2, int/float/date 4,
// bigint/double/timestamp/time/counter 8, uuid/timeuuid 16); nullopt for
// variable-length types. A vector of a fixed-size type is its elements'
// bytes back to back; of any other type, each element is preceded by its
// length as an unsigned vint (FROZEN ON THE WIRE AND ON DISK).
std::optional<size_t> FixedValueSize(const CqlType& type);

// Cassandra's marshal class name of `type`, as the custom type of a vector
// on the wire: "org.apache.cassandra.db.marshal.FloatType",
// "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType,3)".
// Collections and tuples nest their element classes (FrozenType(ListType(..)));
// user types are not supported as vector elements.
std::string MarshalClassName(const CqlType& type);
// The type a marshal class name names: a native type's class, or a
// VectorType of one. Errors: InvalidArgument for any other class.
Result<CqlType> ParseMarshalClassName(std::string_view class_name);

// The cell path of field `index` of a non-frozen user type: the index as 2
// bytes big-endian (Cassandra's field position). FROZEN ON DISK.
std::string UserTypeFieldPath(size_t index);
// The field index a cell path names; nullopt if the path is not 2 bytes.
std::optional<size_t> UserTypeFieldOfPath(std::string_view path);
// The index of field `name` of user type `type`; nullopt if it has none.
std::optional<size_t> UserTypeFieldIndex(const CqlType& type, std::string_view name);

}  // namespace tessera
