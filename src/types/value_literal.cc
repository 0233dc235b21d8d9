#include "types/value_literal.h"

#include "common/bytes.h"
#include "types/serialization.h"
#include "types/value_format.h"

namespace tessera {

std::string ValueLiteral(const CqlType& type, const std::string& bytes) {
  auto v = Deserialize(type, bytes);
  if (!v.ok()) return "0x" + ToHex(bytes);
  switch (type.kind()) {
    case TypeKind::kText: case TypeKind::kAscii: {
      std::string s = "'";
      for (char c : bytes) s += c == '\'' ? std::string("''") : std::string(1, c);
      return s + "'";
    }
    case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt: case TypeKind::kBigint:
    case TypeKind::kCounter:
      return std::to_string(v->as_int());
    case TypeKind::kTimestamp: case TypeKind::kDate: case TypeKind::kTime:
      return "'" + FormatValue(type, bytes) + "'";
    case TypeKind::kBoolean: return v->as_bool() ? "true" : "false";
    case TypeKind::kUuid: case TypeKind::kTimeuuid: {
      std::string h = ToHex(bytes);
      return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
    }
    default: return "0x" + ToHex(bytes);
  }
}

std::string PartitionKeyLiteral(const TableSchema& t, const std::vector<std::string>& pk) {
  auto cols = t.PartitionKey();
  std::string s;
  for (size_t i = 0; i < pk.size() && i < cols.size(); ++i) s += (i ? ", " : "") + ValueLiteral(cols[i]->type, pk[i]);
  return pk.size() > 1 ? "(" + s + ")" : s;
}

}  // namespace tessera
