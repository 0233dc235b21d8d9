// Database: secondary index DDL, the entries kept right on every write, and
// the background build of a new index (db/secondary_index.h).
//
// Every write to an indexed table reads the rows it touches before and after
// (the whole partition for partition and range deletions), under a lock per
// partition stripe so that two writes of one partition on this node take
// turns, and writes the difference to the backing tables: entries that went
// are deleted, new ones (or ones whose expiry moved) inserted with the TTL
// their cell has left. Both at one fresh timestamp, so index writes follow
// the order of the base writes whatever USING TIMESTAMP said.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "db/database.h"
#include "keys/storage_key.h"

namespace tessera {
namespace {

constexpr size_t kBuildPageRows = 256;

std::string BuildMarkerKey(const std::string& keyspace, const std::string& index) {
  return "index_build/" + keyspace + "/" + index;
}

bool HasStaticIndex(const TableSchema& t) {
  return std::any_of(t.indexes.begin(), t.indexes.end(), [&](const IndexDef& i) { return IsStaticIndex(t, i); });
}

}  // namespace

struct Database::IndexedWrite {
  const Mutation* mutation;
  std::shared_ptr<const TableSchema> table;  // the catalog's current schema
};

void Database::RefreshIndexFlag() {
  const auto tables = catalog_.AllTables();
  any_index_.store(std::any_of(tables.begin(), tables.end(),
                               [](const auto& t) {
                                 return !t->views.empty() ||
                                        std::any_of(t->indexes.begin(), t->indexes.end(),
                                                    [](const IndexDef& i) { return !i.is_vector(); });
                               }),
                   std::memory_order_release);
  vector_indexes_->Sync(tables);
}

std::mutex& Database::IndexStripe(uint32_t table_id, const std::vector<std::string>& pk) {
  size_t h = std::hash<uint32_t>()(table_id);
  for (const auto& c : pk) h = h * 31 + std::hash<std::string>()(c);
  return index_stripes_[h % index_stripes_.size()];
}

Result<std::pair<std::shared_ptr<const TableSchema>, IndexDef>> Database::FindIndex(const std::string& keyspace,
                                                                                    const std::string& name) const {
  for (const auto& t : catalog_.Tables(keyspace)) {
    if (const IndexDef* i = t->FindIndex(name)) return std::make_pair(t, *i);
  }
  return Status::NotFound("Index '" + name + "' could not be found in any of the tables of keyspace '" + keyspace + "'");
}

Result<std::shared_ptr<const TableSchema>> Database::CreateIndex(const std::string& keyspace, const std::string& table,
                                                                 IndexDef index, bool build) {
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
    RefreshIndexFlag();
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
  // Writes maintain indexes from here on (ApplyBatch reads the catalog's schema).
  any_index_.store(true, std::memory_order_release);
  TableSchema next = *base;
  next.indexes.push_back(index);
  auto altered = catalog_.AlterTable(std::move(next));
  if (!altered.ok()) {
    std::lock_guard<std::mutex> admin(admin_mu_);
    (void)DropTableLocked(keyspace, index.backing_table);
    RefreshIndexFlag();
    return altered.status();
  }
  if (build) {
    TESSERA_RETURN_IF_ERROR(engine_->MetaPut(BuildMarkerKey(keyspace, index.name), table));
    StartIndexBuild(keyspace, table, index.name);
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
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(BuildMarkerKey(keyspace, name)));
  RefreshIndexFlag();
  return altered;
}

bool Database::IndexBuilt(const std::string& keyspace, const std::string& name) const {
  std::lock_guard<std::mutex> lock(index_builds_mu_);
  return building_indexes_.count({keyspace, name}) == 0;
}

// ---- maintenance ----

Status Database::ReadWholePartition(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                                    const RequestConsistency& consistency, std::optional<RowResult>* static_row, std::vector<RowResult>* rows) {
  SliceRequest req;
  bool first = true;
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(SliceResult slice, ReadSlice(table, pk, req, consistency));
    if (first) *static_row = slice.partition.static_row;
    first = false;
    for (auto& r : slice.partition.rows) rows->push_back(std::move(r));
    if (slice.next_cursor.empty()) return Status::OK();
    req.cursor = slice.next_cursor;
  }
}

Status Database::CollectIndexed(const std::vector<IndexedWrite>& writes, IndexEntrySets* out, ViewRowSets* views,
                                const RequestConsistency& consistency) {
  for (const IndexedWrite& w : writes) {
    const Mutation& m = *w.mutation;
    const TableSchema& t = *w.table;
    std::optional<RowResult> static_row;
    std::vector<RowResult> rows;
    const bool whole = m.delete_partition || !m.range_deletions.empty();
    const bool static_write = std::any_of(m.rows.begin(), m.rows.end(), [](const RowWrite& r) { return r.is_static; });
    if (whole) {
      TESSERA_RETURN_IF_ERROR(ReadWholePartition(w.table, m.partition_key, consistency, &static_row, &rows));
    } else {
      for (const RowWrite& r : m.rows) {
        if (r.is_static) continue;
        TESSERA_ASSIGN_OR_RETURN(auto row, ReadRow(w.table, m.partition_key, r.clustering, consistency));
        if (row) rows.push_back(std::move(*row));
      }
      if (static_write && HasStaticIndex(t)) {
        SliceRequest req;
        req.limit = 0;
        TESSERA_ASSIGN_OR_RETURN(SliceResult slice, ReadSlice(w.table, m.partition_key, req, consistency));
        static_row = slice.partition.static_row;
      }
    }
    for (const IndexDef& index : t.indexes) {
      if (index.is_vector()) continue;  // kept by the storage write itself (db/vector_index.h)
      auto& entries = (*out)[{t.id, index.name}];
      if (IsStaticIndex(t, index)) {
        CollectIndexEntries(t, index, m.partition_key, nullptr, static_row ? &*static_row : nullptr, &entries);
        continue;
      }
      for (const RowResult& r : rows) CollectIndexEntries(t, index, m.partition_key, &r, nullptr, &entries);
    }
    CollectViewRows(t, t.views, m.partition_key, rows, views);
  }
  for (auto& [key, entries] : *out) {
    std::sort(entries.begin(), entries.end());
    entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  }
  return Status::OK();
}

Status Database::WriteIndexChanges(const IndexEntrySets& before, const IndexEntrySets& after,
                                   const RequestConsistency& consistency) {
  const int64_t ts = NextTimestamp();
  const auto now_seconds = static_cast<uint32_t>(NowMicros() / 1'000'000);
  auto same_row = [](const IndexEntry& a, const IndexEntry& b) { return a.value == b.value && a.base_key == b.base_key; };
  std::vector<Mutation> writes;
  for (const auto& [key, old_entries] : before) {
    auto base = catalog_.GetTableById(key.first);
    const IndexDef* index = base ? base->FindIndex(key.second) : nullptr;
    if (!index) continue;
    auto backing = catalog_.GetTable(base->keyspace, index->backing_table);
    if (!backing.ok()) continue;
    const auto found = after.find(key);
    static const std::vector<IndexEntry> kNone;
    const std::vector<IndexEntry>& new_entries = found == after.end() ? kNone : found->second;
    auto mutation_for = [&](const std::vector<std::string>& value, int32_t ttl) -> Mutation& {
      for (auto& m : writes) {
        if (m.table == *backing && m.partition_key == value && m.ttl_seconds == ttl) return m;
      }
      Mutation m;
      m.table = *backing;
      m.partition_key = value;
      m.timestamp_micros = ts;
      m.ttl_seconds = ttl;
      writes.push_back(std::move(m));
      return writes.back();
    };
    for (const IndexEntry& e : old_entries) {
      const bool kept = std::any_of(new_entries.begin(), new_entries.end(), [&](const IndexEntry& n) { return same_row(e, n); });
      if (kept) continue;
      RowWrite del;
      del.clustering = e.base_key;
      del.delete_row = true;
      mutation_for(e.value, 0).rows.push_back(std::move(del));
    }
    for (const IndexEntry& e : new_entries) {
      if (std::binary_search(old_entries.begin(), old_entries.end(), e)) continue;  // unchanged, expiry included
      if (e.expiry != 0 && e.expiry <= now_seconds) continue;                        // expired meanwhile
      RowWrite ins;
      ins.clustering = e.base_key;
      ins.insert = true;
      mutation_for(e.value, e.expiry == 0 ? 0 : static_cast<int32_t>(e.expiry - now_seconds)).rows.push_back(std::move(ins));
    }
  }
  if (writes.empty()) return Status::OK();
  return ApplyBase(writes, nullptr, consistency);
}

Status Database::ApplyWithIndexes(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                                  const RequestConsistency& consistency) {
  std::vector<IndexedWrite> indexed;
  for (const Mutation& m : mutations) {
    auto current = catalog_.GetTableById(m.table->id);
    if (current && (!current->indexes.empty() || !current->views.empty())) indexed.push_back({&m, std::move(current)});
  }
  if (indexed.empty()) return ApplyBase(mutations, warnings, consistency);
  // One lock per partition stripe, taken in address order (no deadlock between batches).
  std::vector<std::mutex*> stripes;
  for (const IndexedWrite& w : indexed) stripes.push_back(&IndexStripe(w.table->id, w.mutation->partition_key));
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  locks.reserve(stripes.size());
  for (std::mutex* s : stripes) locks.emplace_back(*s);

  IndexEntrySets before, after;
  ViewRowSets views_before, views_after;
  TESSERA_RETURN_IF_ERROR(CollectIndexed(indexed, &before, &views_before, consistency));
  TESSERA_RETURN_IF_ERROR(ApplyBase(mutations, warnings, consistency));
  TESSERA_RETURN_IF_ERROR(CollectIndexed(indexed, &after, &views_after, consistency));
  for (const auto& [key, entries] : after) before.try_emplace(key);  // a key only after: all new
  TESSERA_RETURN_IF_ERROR(WriteIndexChanges(before, after, consistency));
  return WriteViewChanges(views_before, views_after, consistency);
}

// ---- build ----

void Database::StartIndexBuild(const std::string& keyspace, const std::string& table, const std::string& index) {
  std::lock_guard<std::mutex> lock(index_builds_mu_);
  if (stopping_) return;
  building_indexes_.insert({keyspace, index});
  index_builders_.emplace_back([this, keyspace, table, index](std::stop_token stop) {
    BuildIndex(std::move(stop), keyspace, table, index);
  });
}

Status Database::ResumeIndexBuilds() {
  TESSERA_ASSIGN_OR_RETURN(auto markers, engine_->MetaScan("index_build/"));
  for (const auto& [key, table] : markers) {
    const std::string rest = key.substr(std::string("index_build/").size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    StartIndexBuild(rest.substr(0, slash), table, rest.substr(slash + 1));
  }
  return ResumeViewBuilds();
}

void Database::StopIndexBuilds() {
  std::vector<std::jthread> builders;
  {
    std::lock_guard<std::mutex> lock(index_builds_mu_);
    stopping_ = true;
    builders.swap(index_builders_);
  }
  for (auto& b : builders) b.request_stop();
  builders.clear();  // joins
}

// Each partition is read again under its stripe lock, so a concurrent write
// of it either precedes (and is seen) or follows (and maintains the derived
// rows itself).
Status Database::ForEachPartitionLocked(const std::stop_token& stop, const std::string& keyspace,
                                        const std::string& table, const PartitionVisitor& partition, bool* stopped) {
  *stopped = false;
  std::string cursor;
  for (;;) {
    if ((*stopped = stop.stop_requested())) return Status::OK();
    auto base = catalog_.GetTable(keyspace, table);
    if (!base.ok()) return Status::OK();  // dropped meanwhile
    RangeRequest req{WholeTableRange(**base), kBuildPageRows, SIZE_MAX, cursor};
    TESSERA_ASSIGN_OR_RETURN(auto page, ScanRange(*base, req));
    for (const auto& p : page.partitions) {
      if ((*stopped = stop.stop_requested())) return Status::OK();
      std::lock_guard<std::mutex> lock(IndexStripe((*base)->id, p.partition_key));
      auto current = catalog_.GetTableById((*base)->id);
      if (!current) return Status::OK();
      bool more = true;
      TESSERA_RETURN_IF_ERROR(partition(current, p.partition_key, &more));
      if (!more) return Status::OK();
    }
    if (page.next_cursor.empty()) return Status::OK();
    cursor = page.next_cursor;
  }
}

void Database::BuildIndex(std::stop_token stop, std::string keyspace, std::string table, std::string index) {
  bool stopped = false;
  Status status = ForEachPartitionLocked(
      stop, keyspace, table,
      [&](const std::shared_ptr<const TableSchema>& current, const std::vector<std::string>& pk, bool* more) -> Status {
        const IndexDef* def = current->FindIndex(index);
        if (!def) {  // dropped meanwhile
          *more = false;
          return Status::OK();
        }
        std::optional<RowResult> static_row;
        std::vector<RowResult> rows;
        TESSERA_RETURN_IF_ERROR(ReadWholePartition(current, pk, kHousekeepingConsistency, &static_row, &rows));
        IndexEntrySets after;
        auto& entries = after[{current->id, index}];
        if (IsStaticIndex(*current, *def)) {
          CollectIndexEntries(*current, *def, pk, nullptr, static_row ? &*static_row : nullptr, &entries);
        } else {
          for (const RowResult& r : rows) CollectIndexEntries(*current, *def, pk, &r, nullptr, &entries);
        }
        IndexEntrySets before{{{current->id, index}, {}}};
        return WriteIndexChanges(before, after, kLocalConsistency);
      },
      &stopped);
  if (stopped) return;  // the marker stays: Open resumes
  if (!status.ok()) {
    spdlog::error("building secondary index {}.{} failed: {} (resumed at the next start)", keyspace, index,
                  status.ToString());
    return;
  }
  (void)engine_->MetaDelete(BuildMarkerKey(keyspace, index));
  std::lock_guard<std::mutex> lock(index_builds_mu_);
  building_indexes_.erase({keyspace, index});
  spdlog::info("secondary index {}.{} built", keyspace, index);
}

}  // namespace tessera
