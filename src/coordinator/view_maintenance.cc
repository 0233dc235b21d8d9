// Coordinator (coordinator/coordinator.h): the view rows kept right on every
// base write (db/materialized_view.h).
//
// As for secondary indexes (coordinator/index_maintenance.cc), the coordinator of a
// base write reads the rows it touches before and after, at the write's
// consistency level, under the partition's lock (coordinator/derived_writes.cc),
// and writes the difference to the view at that level: a view row whose key went is
// deleted, a new or changed one written whole (row marker with the base
// row's remaining TTL, every view column as a value or a tombstone). All
// view writes of one base write share one fresh timestamp, so view rows
// follow the order of the base writes whatever USING TIMESTAMP said.
#include <algorithm>
#include <set>

#include "coordinator/coordinator.h"

namespace tessera {
namespace {

int32_t RemainingTtl(uint32_t expiry, uint32_t now_seconds) {
  return expiry == 0 ? 0 : static_cast<int32_t>(expiry - now_seconds);
}

}  // namespace

void Coordinator::CollectViewRows(const TableSchema& base, const std::vector<std::string>& views,
                               const std::vector<std::string>& partition_key, const std::vector<RowResult>& rows,
                               ViewRowSets* out) const {
  if (views.empty()) return;
  const auto now_seconds = static_cast<uint32_t>(db_->NowMicros() / 1'000'000);
  for (const std::string& name : views) {
    auto view = db_->catalog().GetTable(base.keyspace, name);
    if (!view.ok() || !(*view)->is_view()) continue;
    auto& view_rows = (*out)[{base.id, name}];
    for (const RowResult& r : rows) {
      if (auto v = ViewRowOf(base, **view, partition_key, r, now_seconds)) view_rows.push_back(std::move(*v));
    }
  }
}

void Coordinator::ViewChanges(const ViewRowSets& before, const ViewRowSets& after,
                              std::vector<Mutation>* out) const {
  const int64_t ts = db_->NextTimestamp();
  const auto now_seconds = static_cast<uint32_t>(db_->NowMicros() / 1'000'000);
  std::vector<Mutation> writes;  // this call's, apart from those already in `out`
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
    auto base = db_->catalog().GetTableById(key.first);
    if (!base) continue;
    auto view = db_->catalog().GetTable(base->keyspace, key.second);
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
  for (Mutation& m : writes) out->push_back(std::move(m));
}

}  // namespace tessera
