// Database: secondary index DDL (db/secondary_index.h): the index in the
// catalog and its backing table. Keeping the entries right on every write and
// building them for the rows already there is the coordinator's
// (coordinator/index_maintenance.cc, coordinator/derived_builds.cc).
#include <algorithm>

#include "db/database.h"
#include "keys/storage_key.h"

namespace tessera {
void Database::RefreshVectorIndexes() { vector_indexes_->Sync(catalog_.AllTables()); }

Result<std::pair<std::shared_ptr<const TableSchema>, IndexDef>> Database::FindIndex(const std::string& keyspace,
                                                                                    const std::string& name) const {
  for (const auto& t : catalog_.Tables(keyspace)) {
    if (const IndexDef* i = t->FindIndex(name)) return std::make_pair(t, *i);
  }
  return Status::NotFound("Index '" + name + "' could not be found in any of the tables of keyspace '" + keyspace + "'");
}

Result<std::shared_ptr<const TableSchema>> Database::CreateIndex(const std::string& keyspace, const std::string& table,
                                                                 IndexDef index) {
  TESSERA_ASSIGN_OR_RETURN(auto base, catalog_.GetTable(keyspace, table));
  if (FindIndex(keyspace, index.name).ok()) return Status::AlreadyExists("Index '" + index.name + "' already exists");
  for (const IndexDef& other : base->indexes) {
    if (other.column_id == index.column_id && other.target == index.target && other.kind == index.kind) {
      return Status::InvalidArgument("Index " + index.name + " is a duplicate of existing index " + other.name);
    }
  }
  if (index.is_vector()) {  // no backing table and nothing to build now: each node reads its rows at the first search
    const ColumnDef* column = base->FindColumnById(index.column_id);
    if (!column) return Status::InvalidArgument("no column " + std::to_string(index.column_id));
    TESSERA_RETURN_IF_ERROR(CheckVectorIndexable(*base, *column));
    index.backing_table.clear();
    TableSchema next = *base;
    next.indexes.push_back(index);
    TESSERA_ASSIGN_OR_RETURN(auto altered, catalog_.AlterTable(std::move(next)));
    RefreshVectorIndexes();
    TESSERA_RETURN_IF_ERROR(vector_indexes_->Build(altered->id, index.name));
    return altered;
  }
  index.backing_table = index.name + "_index";
  TESSERA_ASSIGN_OR_RETURN(TableSchema backing, BackingTableSchema(*base, index));
  auto created = CreateTable(std::move(backing));
  if (!created.ok()) {
    if (created.status().IsAlreadyExists()) {
      return Status::InvalidArgument("Cannot create index " + index.name + ": table " + index.backing_table +
                                     ", where it would keep its entries, already exists");
    }
    return created.status();
  }
  TableSchema next = *base;
  next.indexes.push_back(index);
  auto altered = catalog_.AlterTable(std::move(next));
  if (!altered.ok()) {
    std::lock_guard<std::mutex> admin(admin_mu_);
    (void)DropTableLocked(keyspace, index.backing_table);
    return altered.status();
  }
  return altered;
}

Result<std::shared_ptr<const TableSchema>> Database::DropIndex(const std::string& keyspace, const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(auto found, FindIndex(keyspace, name));
  TableSchema next = *found.first;
  next.indexes.erase(std::remove_if(next.indexes.begin(), next.indexes.end(),
                                    [&](const IndexDef& i) { return i.name == name; }),
                     next.indexes.end());
  TESSERA_ASSIGN_OR_RETURN(auto altered, catalog_.AlterTable(std::move(next)));
  if (!found.second.is_vector()) {
    std::lock_guard<std::mutex> admin(admin_mu_);
    Status s = DropTableLocked(keyspace, found.second.backing_table);
    if (!s.ok() && !s.IsNotFound()) return s;
  }
  RefreshVectorIndexes();
  return altered;
}

}  // namespace tessera
