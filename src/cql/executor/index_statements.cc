#include "cql/executor/index_statements.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace tessera::cql {
namespace {

std::string WordCharacters(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') out.push_back(c);
  }
  return out;
}

IndexDef::Target TargetOf(const CreateIndexStatement& s, const ColumnDef& c) {
  switch (s.target) {
    case CreateIndexStatement::Target::kKeys: return IndexDef::Target::kKeys;
    case CreateIndexStatement::Target::kEntries: return IndexDef::Target::kEntries;
    case CreateIndexStatement::Target::kFull: return IndexDef::Target::kFull;
    case CreateIndexStatement::Target::kValues: return IndexDef::Target::kValues;
    case CreateIndexStatement::Target::kSimple:
      // As Cassandra: a plain column of a frozen collection indexes the whole value.
      return c.type.IsCollection() && c.type.frozen() ? IndexDef::Target::kFull : IndexDef::Target::kValues;
  }
  return IndexDef::Target::kValues;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

// USING 'class' [WITH OPTIONS = {...}]: the vector index classes of
// Cassandra 5.0 (StorageAttachedIndex, its short name sai) and ScyllaDB
// (vector_index); any other class is refused. Whether the column can carry
// one is Database::CreateIndex's check (CheckVectorIndexable).
Status VectorIndexOf(const CreateIndexStatement& s, const TableSchema& table, const ColumnDef& column, IndexDef* index) {
  const std::string& cls = *s.custom_class;
  const bool known = EqualsIgnoringCase(cls, "StorageAttachedIndex") || EqualsIgnoringCase(cls, "sai") ||
                     cls == "org.apache.cassandra.index.sai.StorageAttachedIndex" || EqualsIgnoringCase(cls, "vector_index");
  if (!known) {
    return Status::InvalidArgument("Custom index class '" + cls + "' is not supported: Tessera builds global secondary "
                                   "indexes (CREATE INDEX without USING) and vector indexes (USING 'StorageAttachedIndex' "
                                   "or 'vector_index' on a vector<float, n> column)");
  }
  if (s.target != CreateIndexStatement::Target::kSimple) {
    return Status::InvalidArgument("Vector indexes take the column itself as their target, not " + column.name + "'s "
                                   "keys, values, entries or full value");
  }
  index->kind = IndexDef::Kind::kVector;
  index->class_name = cls;
  for (const Property& p : s.properties) {
    if (p.name != "options") return Status::InvalidArgument("Unknown index property '" + p.name + "'");
    if (p.value.kind != Term::Kind::kMap) return Status::InvalidArgument("OPTIONS must be a map of option names to values");
    for (size_t i = 0; i < p.value.elements.size() && i < p.value.map_values.size(); ++i) {
      const std::string& name = p.value.elements[i].text;
      const std::string& value = p.value.map_values[i].text;
      if (EqualsIgnoringCase(name, "similarity_function")) {
        auto similarity = ParseSimilarity(value);
        if (!similarity) {
          return Status::InvalidArgument("Invalid similarity_function '" + value +
                                         "'; it must be one of cosine, euclidean, dot_product");
        }
        index->similarity = *similarity;
      } else {
        return Status::InvalidArgument("Unsupported vector index option '" + name + "'");
      }
    }
  }
  if (index->similarity == IndexDef::Similarity::kCosine && column.type.dimension() == 1) {
    return Status::InvalidArgument("Cosine similarity is not supported for single-dimension vectors");
  }
  return Status::OK();
}

}  // namespace

std::string DefaultIndexName(const Database& db, const std::string& keyspace, const std::string& table,
                             const std::string& column) {
  const std::string base = WordCharacters(table + "_" + column + "_idx");
  std::string name = base;
  for (int i = 1; db.FindIndex(keyspace, name).ok(); ++i) name = base + "_" + std::to_string(i);
  return name;
}

Result<SchemaOutcome> ExecuteCreateIndex(Coordinator& coordinator, const CreateIndexStatement& s,
                                         const std::string& current, bool build) {
  Database& db = coordinator.database();
  const std::string ks = KeyspaceOf(s.table, current);
  if (ks.empty()) return NoKeyspace();
  if (!s.name_keyspace.empty() && s.name_keyspace != ks) {
    return Status::InvalidArgument("Keyspace name '" + s.name_keyspace + "' doesn't match index name '" + s.name + "'");
  }
  auto table = db.GetTable(ks, s.table.name);
  if (!table.ok()) return Status::InvalidArgument("Table '" + ks + "." + s.table.name + "' doesn't exist");
  if (!(*table)->index_of.empty()) {
    return Status::InvalidArgument("Cannot create a secondary index on table " + s.table.name +
                                   ": it holds secondary index " + (*table)->index_of);
  }
  if ((*table)->is_view()) return Status::InvalidArgument("Secondary indexes are not supported on materialized views");
  const ColumnDef* column = (*table)->FindColumn(s.column);
  if (!column) return Status::InvalidArgument("Undefined column name " + s.column);
  IndexDef index;
  index.column_id = column->id;
  index.target = TargetOf(s, *column);
  if (s.custom_class) TESSERA_RETURN_IF_ERROR(VectorIndexOf(s, **table, *column, &index));
  index.name = s.name.empty() ? DefaultIndexName(db, ks, s.table.name, column->name) : s.name;
  if (s.if_not_exists) {
    if (db.FindIndex(ks, index.name).ok()) return SchemaOutcome{};
    for (const IndexDef& other : (*table)->indexes) {
      if (other.column_id == index.column_id && other.target == index.target) return SchemaOutcome{};
    }
  }
  auto created = coordinator.CreateIndex(ks, s.table.name, index, build);
  if (!created.ok()) {
    if (created.status().IsAlreadyExists()) return Status::InvalidArgument(created.status().message());
    return created.status();
  }
  return SchemaOutcome{SchemaChange{"UPDATED", "TABLE", ks, s.table.name}};
}

Result<SchemaOutcome> ExecuteDropIndex(Coordinator& coordinator, const DropStatement& s, const std::string& current) {
  const std::string ks = KeyspaceOf(s.name, current);
  if (ks.empty()) return NoKeyspace();
  auto dropped = coordinator.DropIndex(ks, s.name.name);
  if (!dropped.ok()) {
    if (dropped.status().IsNotFound()) {
      if (s.if_exists) return SchemaOutcome{};
      return Status::InvalidArgument(dropped.status().message());
    }
    return dropped.status();
  }
  return SchemaOutcome{SchemaChange{"UPDATED", "TABLE", ks, (*dropped)->name}};
}

}  // namespace tessera::cql
