// Database: materialized view DDL, the view rows kept right on every base
// write, and the background build of a new view (db/materialized_view.h).
//
// As for secondary indexes (db/index_maintenance.cc), the coordinator of a
// base write reads the rows it touches before and after, at the write's
// consistency level, under the partition's stripe lock, and writes the
// difference to the view at that level: a view row whose key went is
// deleted, a new or changed one written whole (row marker with the base
// row's remaining TTL, every view column as a value or a tombstone). All
// view writes of one base write share one fresh timestamp, so view rows
// follow the order of the base writes whatever USING TIMESTAMP said.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "db/database.h"

namespace tessera {
namespace {

std::string ViewBuildMarkerKey(const std::string& keyspace, const std::string& view) {
  return "view_build/" + keyspace + "/" + view;
}

int32_t RemainingTtl(uint32_t expiry, uint32_t now_seconds) {
  return expiry == 0 ? 0 : static_cast<int32_t>(expiry - now_seconds);
}

}  // namespace

// ---- DDL ----

Result<std::shared_ptr<const TableSchema>> Database::CreateView(TableSchema view, bool build) {
  if (!view.view) return Status::InvalidArgument("table " + view.name + " is not a materialized view");
  const std::string keyspace = view.keyspace, name = view.name, base_name = view.view->base_table;
  TESSERA_ASSIGN_OR_RETURN(auto base, catalog_.GetTable(keyspace, base_name));
  TESSERA_RETURN_IF_ERROR(ValidateViewDefinition(*base, view));
  view.view->base_uuid = base->uuid;
  TESSERA_ASSIGN_OR_RETURN(auto created, CreateTable(std::move(view)));
  // Writes maintain the view from here on (ApplyBatch reads the catalog's schema).
  any_index_.store(true, std::memory_order_release);
  TableSchema next = *base;
  next.views.push_back(name);
  auto altered = catalog_.AlterTable(std::move(next));
  if (!altered.ok()) {
    std::lock_guard<std::mutex> admin(admin_mu_);
    (void)DropTableLocked(keyspace, name);
    RefreshIndexFlag();
    return altered.status();
  }
  if (build) {
    TESSERA_RETURN_IF_ERROR(engine_->MetaPut(ViewBuildMarkerKey(keyspace, name), base_name));
    StartViewBuild(keyspace, base_name, name);
  }
  return created;
}

Status Database::DropView(const std::string& keyspace, const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(auto view, catalog_.GetTable(keyspace, name));
  if (!view->is_view()) return Status::NotFound("Materialized view '" + name + "' doesn't exist");
  // The base stops maintaining it first, so no write lands in a dropped table.
  if (auto base = catalog_.GetTable(keyspace, view->view->base_table); base.ok()) {
    TableSchema next = **base;
    std::erase(next.views, name);
    TESSERA_RETURN_IF_ERROR(catalog_.AlterTable(std::move(next)).status());
  }
  {
    std::lock_guard<std::mutex> admin(admin_mu_);
    TESSERA_RETURN_IF_ERROR(DropTableLocked(keyspace, name));
  }
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(ViewBuildMarkerKey(keyspace, name)));
  RefreshIndexFlag();
  return Status::OK();
}

Database::ViewBuildState Database::ViewBuild(const std::string& keyspace, const std::string& view) const {
  std::lock_guard<std::mutex> lock(index_builds_mu_);
  auto it = building_views_.find({keyspace, view});
  if (it == building_views_.end()) return {};
  return {false, it->second};
}

// ---- maintenance ----

void Database::CollectViewRows(const TableSchema& base, const std::vector<std::string>& views,
                               const std::vector<std::string>& partition_key, const std::vector<RowResult>& rows,
                               ViewRowSets* out) const {
  if (views.empty()) return;
  const auto now_seconds = static_cast<uint32_t>(NowMicros() / 1'000'000);
  for (const std::string& name : views) {
    auto view = catalog_.GetTable(base.keyspace, name);
    if (!view.ok() || !(*view)->is_view()) continue;
    auto& view_rows = (*out)[{base.id, name}];
    for (const RowResult& r : rows) {
      if (auto v = ViewRowOf(base, **view, partition_key, r, now_seconds)) view_rows.push_back(std::move(*v));
    }
  }
}

Status Database::WriteViewChanges(const ViewRowSets& before, const ViewRowSets& after,
                                  const RequestConsistency& consistency) {
  const int64_t ts = NextTimestamp();
  const auto now_seconds = static_cast<uint32_t>(NowMicros() / 1'000'000);
  std::vector<Mutation> writes;
  auto mutation_for = [&](const std::shared_ptr<const TableSchema>& view, const std::vector<std::string>& pk,
                          int32_t ttl) -> Mutation& {
    for (auto& m : writes) {
      if (m.table == view && m.partition_key == pk && m.ttl_seconds == ttl) return m;
    }
    Mutation m;
    m.table = view;
    m.partition_key = pk;
    m.timestamp_micros = ts;
    m.ttl_seconds = ttl;
    writes.push_back(std::move(m));
    return writes.back();
  };
  static const std::vector<ViewRow> kNone;
  std::set<std::pair<uint32_t, std::string>> keys;
  for (const auto& [key, rows] : before) keys.insert(key);
  for (const auto& [key, rows] : after) keys.insert(key);
  for (const auto& key : keys) {
    auto base = catalog_.GetTableById(key.first);
    if (!base) continue;
    auto view = catalog_.GetTable(base->keyspace, key.second);
    if (!view.ok() || !(*view)->is_view()) continue;
    const auto b = before.find(key), a = after.find(key);
    const std::vector<ViewRow>& old_rows = b == before.end() ? kNone : b->second;
    const std::vector<ViewRow>& new_rows = a == after.end() ? kNone : a->second;
    for (const ViewRow& old_row : old_rows) {
      if (std::any_of(new_rows.begin(), new_rows.end(), [&](const ViewRow& n) { return n.SameKey(old_row); })) continue;
      RowWrite del;
      del.clustering = old_row.clustering;
      del.delete_row = true;
      mutation_for(*view, old_row.partition_key, 0).rows.push_back(std::move(del));
    }
    for (const ViewRow& row : new_rows) {
      if (std::find(old_rows.begin(), old_rows.end(), row) != old_rows.end()) continue;  // unchanged
      if (row.expiry != 0 && row.expiry <= now_seconds) continue;                        // expired meanwhile
      // The whole row: marker, then every view column, null ones as tombstones.
      RowWrite marker;
      marker.clustering = row.clustering;
      marker.insert = true;
      mutation_for(*view, row.partition_key, RemainingTtl(row.expiry, now_seconds)).rows.push_back(std::move(marker));
      RowWrite plain;
      plain.clustering = row.clustering;
      for (const ColumnDef& c : (*view)->columns) {
        if (c.kind != ColumnKind::kRegular) continue;
        const bool multi = c.type.IsMultiCell();
        bool any = false;
        if (multi) {
          CellWrite clear;
          clear.column_id = c.id;
          clear.delete_collection = true;
          plain.cells.push_back(std::move(clear));
        }
        for (const ViewCell& cell : row.cells) {
          if (cell.column_id != c.id) continue;
          if (cell.expiry != 0 && cell.expiry <= now_seconds) continue;
          any = true;
          CellWrite w;
          w.column_id = c.id;
          w.value = cell.value;
          w.has_path = cell.has_path;
          w.path = cell.path;
          if (cell.expiry == 0) {
            plain.cells.push_back(std::move(w));
          } else {
            RowWrite expiring;
            expiring.clustering = row.clustering;
            expiring.cells.push_back(std::move(w));
            mutation_for(*view, row.partition_key, RemainingTtl(cell.expiry, now_seconds)).rows.push_back(std::move(expiring));
          }
        }
        if (!any && !multi) {
          CellWrite tombstone;
          tombstone.column_id = c.id;
          plain.cells.push_back(std::move(tombstone));
        }
      }
      if (!plain.cells.empty()) mutation_for(*view, row.partition_key, 0).rows.push_back(std::move(plain));
    }
  }
  if (writes.empty()) return Status::OK();
  return ApplyBase(writes, nullptr, consistency);
}

// ---- build ----

void Database::StartViewBuild(const std::string& keyspace, const std::string& base, const std::string& view) {
  std::lock_guard<std::mutex> lock(index_builds_mu_);
  if (stopping_) return;
  building_views_.emplace(std::make_pair(keyspace, view), 0);
  index_builders_.emplace_back([this, keyspace, base, view](std::stop_token stop) {
    BuildView(std::move(stop), keyspace, base, view);
  });
}

Status Database::ResumeViewBuilds() {
  TESSERA_ASSIGN_OR_RETURN(auto markers, engine_->MetaScan("view_build/"));
  for (const auto& [key, base] : markers) {
    const std::string rest = key.substr(std::string("view_build/").size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    StartViewBuild(rest.substr(0, slash), base, rest.substr(slash + 1));
  }
  return Status::OK();
}

void Database::BuildView(std::stop_token stop, std::string keyspace, std::string base, std::string view) {
  bool stopped = false;
  Status status = ForEachPartitionLocked(
      stop, keyspace, base,
      [&](const std::shared_ptr<const TableSchema>& current, const std::vector<std::string>& pk, bool* more) -> Status {
        if (std::find(current->views.begin(), current->views.end(), view) == current->views.end()) {
          *more = false;  // dropped meanwhile
          return Status::OK();
        }
        std::optional<RowResult> static_row;
        std::vector<RowResult> rows;
        TESSERA_RETURN_IF_ERROR(ReadWholePartition(current, pk, kHousekeepingConsistency, &static_row, &rows));
        ViewRowSets after;
        CollectViewRows(*current, {view}, pk, rows, &after);  // this view alone: the others keep their own rows
        TESSERA_RETURN_IF_ERROR(WriteViewChanges({}, after, kLocalConsistency));
        std::lock_guard<std::mutex> lock(index_builds_mu_);
        ++building_views_[{keyspace, view}];
        return Status::OK();
      },
      &stopped);
  if (stopped) return;  // the marker stays: Open resumes
  if (!status.ok()) {
    spdlog::error("building materialized view {}.{} failed: {} (resumed at the next start)", keyspace, view,
                  status.ToString());
    return;
  }
  (void)engine_->MetaDelete(ViewBuildMarkerKey(keyspace, view));
  std::lock_guard<std::mutex> lock(index_builds_mu_);
  building_views_.erase({keyspace, view});
  spdlog::info("materialized view {}.{} built", keyspace, view);
}

}  // namespace tessera
