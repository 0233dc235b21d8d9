// Coordinator (coordinator/coordinator.h): the background builds of a new
// secondary index or materialized view, which write the derived rows of the
// rows already there, partition by partition, and their resumption after a
// restart (coordinator/build_markers.h).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "coordinator/build_markers.h"
#include "coordinator/coordinator.h"
#include "db/reader.h"

namespace tessera {
namespace {

constexpr size_t kBuildPageRows = 256;

}  // namespace

Status Coordinator::Start() {
  TESSERA_ASSIGN_OR_RETURN(auto indexes, db_->engine()->MetaScan(build_markers::kIndexPrefix));
  for (const auto& [key, table] : indexes) {
    const std::string rest = key.substr(std::string(build_markers::kIndexPrefix).size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    StartIndexBuild(rest.substr(0, slash), table, rest.substr(slash + 1));
  }
  TESSERA_ASSIGN_OR_RETURN(auto views, db_->engine()->MetaScan(build_markers::kViewPrefix));
  for (const auto& [key, base] : views) {
    const std::string rest = key.substr(std::string(build_markers::kViewPrefix).size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    StartViewBuild(rest.substr(0, slash), base, rest.substr(slash + 1));
  }
  return Status::OK();
}

void Coordinator::StartIndexBuild(const std::string& keyspace, const std::string& table, const std::string& index) {
  std::lock_guard<std::mutex> lock(builds_mu_);
  if (stopping_) return;
  building_indexes_.insert({keyspace, index});
  builders_.emplace_back([this, keyspace, table, index](std::stop_token stop) {
    BuildIndex(std::move(stop), keyspace, table, index);
  });
}

void Coordinator::StartViewBuild(const std::string& keyspace, const std::string& base, const std::string& view) {
  std::lock_guard<std::mutex> lock(builds_mu_);
  if (stopping_) return;
  building_views_.emplace(std::make_pair(keyspace, view), 0);
  builders_.emplace_back([this, keyspace, base, view](std::stop_token stop) {
    BuildView(std::move(stop), keyspace, base, view);
  });
}

// Each partition is read again under its partition lock, so a concurrent write
// of it either precedes (and is seen) or follows (and maintains the derived
// rows itself).
Status Coordinator::ForEachPartitionLocked(const std::stop_token& stop, const std::string& keyspace,
                                        const std::string& table, const PartitionVisitor& partition, bool* stopped) {
  *stopped = false;
  std::string cursor;
  for (;;) {
    if ((*stopped = stop.stop_requested())) return Status::OK();
    auto base = db_->catalog().GetTable(keyspace, table);
    if (!base.ok()) return Status::OK();  // dropped meanwhile
    RangeRequest req{WholeTableRange(**base), kBuildPageRows, SIZE_MAX, cursor};
    TESSERA_ASSIGN_OR_RETURN(auto page, ScanRange(*base, req));
    for (const auto& p : page.partitions) {
      if ((*stopped = stop.stop_requested())) return Status::OK();
      PartitionLocks::Held held = partition_locks_.Lock({PartitionLocks::KeyOf((*base)->id, p.partition_key)});
      auto current = db_->catalog().GetTableById((*base)->id);
      if (!current) return Status::OK();
      bool more = true;
      TESSERA_RETURN_IF_ERROR(partition(current, p.partition_key, &more));
      if (!more) return Status::OK();
    }
    if (page.next_cursor.empty()) return Status::OK();
    cursor = page.next_cursor;
  }
}

void Coordinator::BuildIndex(std::stop_token stop, std::string keyspace, std::string table, std::string index) {
  bool stopped = false;
  Status status = ForEachPartitionLocked(
      stop, keyspace, table,
      [&](const std::shared_ptr<const TableSchema>& current, const std::vector<std::string>& pk, bool* more) -> Status {
        const IndexDef* def = current->FindIndex(index);
        if (!def) {  // dropped meanwhile
          *more = false;
          return Status::OK();
        }
        TESSERA_ASSIGN_OR_RETURN(TouchedRows touched, ReadWholePartition(current, pk, kHousekeepingConsistency));
        IndexEntrySets after;
        auto& entries = after[{current->id, index}];
        if (IsStaticIndex(*current, *def)) {
          CollectIndexEntries(*current, *def, pk, nullptr, touched.static_row ? &*touched.static_row : nullptr,
                              &entries);
        } else {
          for (const RowResult& r : touched.rows) CollectIndexEntries(*current, *def, pk, &r, nullptr, &entries);
        }
        IndexEntrySets before{{{current->id, index}, {}}};
        std::vector<Mutation> changes;
        IndexChanges(before, after, &changes);
        return changes.empty() ? Status::OK() : ApplyBase(changes, nullptr, kLocalConsistency);
      },
      &stopped);
  if (stopped) return;  // the marker stays: Start resumes it
  if (!status.ok()) {
    spdlog::error("building secondary index {}.{} failed: {} (resumed at the next start)", keyspace, index,
                  status.ToString());
    return;
  }
  (void)db_->engine()->MetaDelete(build_markers::IndexKey(keyspace, index));
  std::lock_guard<std::mutex> lock(builds_mu_);
  building_indexes_.erase({keyspace, index});
  spdlog::info("secondary index {}.{} built", keyspace, index);
}

void Coordinator::BuildView(std::stop_token stop, std::string keyspace, std::string base, std::string view) {
  bool stopped = false;
  Status status = ForEachPartitionLocked(
      stop, keyspace, base,
      [&](const std::shared_ptr<const TableSchema>& current, const std::vector<std::string>& pk, bool* more) -> Status {
        if (std::find(current->views.begin(), current->views.end(), view) == current->views.end()) {
          *more = false;  // dropped meanwhile
          return Status::OK();
        }
        TESSERA_ASSIGN_OR_RETURN(TouchedRows touched, ReadWholePartition(current, pk, kHousekeepingConsistency));
        ViewRowSets after;
        CollectViewRows(*current, {view}, pk, touched.rows, &after);  // this view alone: the others keep their own rows
        std::vector<Mutation> changes;
        ViewChanges({}, after, &changes);
        if (!changes.empty()) TESSERA_RETURN_IF_ERROR(ApplyBase(changes, nullptr, kLocalConsistency));
        std::lock_guard<std::mutex> lock(builds_mu_);
        ++building_views_[{keyspace, view}];
        return Status::OK();
      },
      &stopped);
  if (stopped) return;  // the marker stays: Start resumes it
  if (!status.ok()) {
    spdlog::error("building materialized view {}.{} failed: {} (resumed at the next start)", keyspace, view,
                  status.ToString());
    return;
  }
  (void)db_->engine()->MetaDelete(build_markers::ViewKey(keyspace, view));
  std::lock_guard<std::mutex> lock(builds_mu_);
  building_views_.erase({keyspace, view});
  spdlog::info("materialized view {}.{} built", keyspace, view);
}

}  // namespace tessera
