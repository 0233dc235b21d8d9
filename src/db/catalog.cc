#include "db/catalog.h"

#include "common/bytes.h"
#include "common/uuid.h"
#include "types/schema_json.h"

namespace tessera {
Status Catalog::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  TESSERA_ASSIGN_OR_RETURN(auto kss, engine_->MetaScan("keyspace/"));
  for (const auto& [k, v] : kss) {
    TESSERA_ASSIGN_OR_RETURN(KeyspaceMetadata ks, KeyspaceFromJson(v));
    keyspaces_[ks.name] = ks;
  }
  TESSERA_RETURN_IF_ERROR(LoadTypes());
  TESSERA_RETURN_IF_ERROR(LoadFunctions());
  TESSERA_ASSIGN_OR_RETURN(auto tables, engine_->MetaScan("table/"));
  for (const auto& [k, v] : tables) {
    const size_t slash = k.find('/', 6);
    UserTypeLookup types = [this, ks = k.substr(6, slash - 6)](const std::string& name) {
      return FindTypeLocked(ks, name);  // mu_ is held by Load
    };
    TESSERA_ASSIGN_OR_RETURN(TableSchema t, TableFromJson(v, &types));
    auto ptr = std::make_shared<const TableSchema>(std::move(t));
    tables_[{ptr->keyspace, ptr->name}] = ptr;
    engine_->registry().Put(ptr);
  }
  std::string next;
  Status s = engine_->MetaGet("next_table_id", &next);
  if (s.ok()) next_table_id_ = static_cast<uint32_t>(std::stoul(next));
  else if (!s.IsNotFound()) return s;
  ++version_;
  return Status::OK();
}

namespace {

// Keyspaces are stored as JSON text (FROZEN ON DISK), which is UTF-8.
Status CheckUtf8(const KeyspaceMetadata& ks) {
  bool ok = IsValidUtf8(ks.name);
  for (const auto& [k, v] : ks.replication) ok = ok && IsValidUtf8(k) && IsValidUtf8(v);
  return ok ? Status::OK() : Status::InvalidArgument("keyspace names and options must be valid UTF-8");
}

}  // namespace

Status Catalog::CreateKeyspace(const KeyspaceMetadata& ks) {
  if (ks.name.empty()) return Status::InvalidArgument("keyspace name must not be empty");
  TESSERA_RETURN_IF_ERROR(CheckUtf8(ks));
  std::lock_guard<std::mutex> lock(mu_);
  if (keyspaces_.count(ks.name)) return Status::AlreadyExists("keyspace " + ks.name + " already exists");
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut("keyspace/" + ks.name, KeyspaceToJson(ks)));
  keyspaces_[ks.name] = ks;
  ++version_;
  return Status::OK();
}

Status Catalog::AlterKeyspace(const KeyspaceMetadata& ks) {
  TESSERA_RETURN_IF_ERROR(CheckUtf8(ks));
  std::lock_guard<std::mutex> lock(mu_);
  if (!keyspaces_.count(ks.name)) return Status::NotFound("keyspace " + ks.name + " does not exist");
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut("keyspace/" + ks.name, KeyspaceToJson(ks)));
  keyspaces_[ks.name] = ks;
  ++version_;
  return Status::OK();
}

Result<std::vector<std::shared_ptr<const TableSchema>>> Catalog::DropKeyspace(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!keyspaces_.count(name)) return Status::NotFound("keyspace " + name + " does not exist");
  std::vector<std::shared_ptr<const TableSchema>> dropped;
  for (auto it = tables_.begin(); it != tables_.end();) {
    if (it->first.first == name) {
      TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(TableKey(name, it->first.second)));
      engine_->registry().Remove(it->second->id);
      dropped.push_back(it->second);
      it = tables_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = types_.begin(); it != types_.end();) {
    if (it->first.first == name) {
      TESSERA_RETURN_IF_ERROR(engine_->MetaDelete("type/" + name + "/" + it->first.second));
      it = types_.erase(it);
    } else {
      ++it;
    }
  }
  TESSERA_RETURN_IF_ERROR(DropFunctionsOfKeyspaceLocked(name));
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete("keyspace/" + name));
  keyspaces_.erase(name);
  ++version_;
  return dropped;
}

Status Catalog::PersistTable(const TableSchema& t) { return engine_->MetaPut(TableKey(t.keyspace, t.name), TableToJson(t)); }

Result<std::shared_ptr<const TableSchema>> Catalog::CreateTable(TableSchema t) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!keyspaces_.count(t.keyspace)) return Status::NotFound("keyspace " + t.keyspace + " does not exist");
  if (tables_.count({t.keyspace, t.name})) {
    return Status::AlreadyExists("table " + t.keyspace + "." + t.name + " already exists");
  }
  for (size_t i = 0; i < t.columns.size(); ++i) t.columns[i].id = static_cast<uint32_t>(i);
  t.id = next_table_id_;
  if (t.uuid.size() != 16) t.uuid = RandomUuidV4();
  TESSERA_RETURN_IF_ERROR(t.Validate());
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut("next_table_id", std::to_string(next_table_id_ + 1)));
  ++next_table_id_;
  TESSERA_RETURN_IF_ERROR(PersistTable(t));
  auto ptr = std::make_shared<const TableSchema>(std::move(t));
  tables_[{ptr->keyspace, ptr->name}] = ptr;
  engine_->registry().Put(ptr);
  ++version_;
  return ptr;
}

Result<std::shared_ptr<const TableSchema>> Catalog::AlterTable(TableSchema t, bool layout_change) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tables_.find({t.keyspace, t.name});
  if (it == tables_.end()) return Status::NotFound("table " + t.keyspace + "." + t.name + " does not exist");
  const TableSchema& old = *it->second;
  auto key_columns = [](const TableSchema& s) {
    std::vector<std::tuple<std::string, std::string, int, int>> out;
    for (const auto* c : s.PartitionKey()) out.emplace_back(c->name, c->type.ToCql(), 0, 0);
    for (const auto* c : s.Clustering()) out.emplace_back(c->name, c->type.ToCql(), 1, static_cast<int>(c->order));
    return out;
  };
  if (key_columns(old) != key_columns(t)) return Status::InvalidArgument("primary key columns cannot be altered");
  if (t.distribution != old.distribution) return Status::InvalidArgument("distribution cannot be altered");
  if (!layout_change) {  // ALTER ... WITH buckets = 'auto' may set `automatic`, not the counts
    t.buckets.versions = old.buckets.versions;
    t.partition_buckets.counts = old.partition_buckets.counts;
    t.partition_buckets.partitions = old.partition_buckets.partitions;
  }
  t.id = old.id;
  t.uuid = old.uuid;
  uint32_t next = old.NextColumnId();
  for (auto& c : t.columns) {
    const ColumnDef* prev = old.FindColumn(c.name);
    if (prev) {
      c.id = prev->id;
    } else {
      c.id = next++;
    }
  }
  TESSERA_RETURN_IF_ERROR(t.Validate());
  TESSERA_RETURN_IF_ERROR(PersistTable(t));
  auto ptr = std::make_shared<const TableSchema>(std::move(t));
  it->second = ptr;
  engine_->registry().Put(ptr);
  ++version_;
  return ptr;
}

Result<std::shared_ptr<const TableSchema>> Catalog::DropTable(const std::string& ks, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tables_.find({ks, name});
  if (it == tables_.end()) return Status::NotFound("table " + ks + "." + name + " does not exist");
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(TableKey(ks, name)));
  auto dropped = it->second;
  engine_->registry().Remove(dropped->id);
  tables_.erase(it);
  ++version_;
  return dropped;
}

Result<std::shared_ptr<const TableSchema>> Catalog::GetTable(const std::string& ks, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tables_.find({ks, name});
  if (it == tables_.end()) return Status::NotFound("table " + ks + "." + name + " does not exist");
  return it->second;
}

std::shared_ptr<const TableSchema> Catalog::GetTableById(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, t] : tables_) {
    if (t->id == id) return t;
  }
  return nullptr;
}

Result<KeyspaceMetadata> Catalog::GetKeyspace(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = keyspaces_.find(name);
  if (it == keyspaces_.end()) return Status::NotFound("keyspace " + name + " does not exist");
  return it->second;
}

std::vector<KeyspaceMetadata> Catalog::Keyspaces() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<KeyspaceMetadata> out;
  for (const auto& [n, ks] : keyspaces_) out.push_back(ks);
  return out;
}

std::vector<std::shared_ptr<const TableSchema>> Catalog::Tables(const std::string& ks) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const TableSchema>> out;
  for (const auto& [k, t] : tables_) {
    if (k.first == ks) out.push_back(t);
  }
  return out;
}

std::vector<std::shared_ptr<const TableSchema>> Catalog::AllTables() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const TableSchema>> out;
  for (const auto& [k, t] : tables_) out.push_back(t);
  return out;
}

uint64_t Catalog::version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

}  // namespace tessera
