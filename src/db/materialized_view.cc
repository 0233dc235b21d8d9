#include "db/materialized_view.h"

#include <algorithm>

namespace tessera {
namespace {

bool IsKey(const ColumnDef& c) { return c.kind == ColumnKind::kPartitionKey || c.kind == ColumnKind::kClustering; }

// Position of `c` among the base's partition key or clustering columns.
size_t KeyPosition(const TableSchema& base, const ColumnDef& c) {
  const auto cols = base.OfKind(c.kind);
  return static_cast<size_t>(std::find(cols.begin(), cols.end(), &c) - cols.begin());
}

uint32_t CellExpiry(const Cell& c) { return c.IsExpiring() ? c.local_deletion_time : 0; }

// 0 (never) dominates; else the later expiry.
uint32_t Longer(uint32_t a, uint32_t b) { return a == 0 || b == 0 ? 0 : std::max(a, b); }

}  // namespace

Status ValidateViewDefinition(const TableSchema& base, const TableSchema& view) {
  if (!view.view) return Status::InvalidArgument("table " + view.name + " is not a materialized view");
  if (base.HasCounters()) return Status::InvalidArgument("Materialized views are not supported on counter tables");
  if (base.is_view()) return Status::InvalidArgument("Materialized views cannot be created against other materialized views");
  std::vector<std::string> others;
  for (const ColumnDef& c : view.columns) {
    const ColumnDef* b = base.FindColumn(c.name);
    if (!b) return Status::InvalidArgument("Unknown column name detected in CREATE MATERIALIZED VIEW statement: " + c.name);
    if (!(b->type == c.type)) return Status::InvalidArgument("column " + c.name + " of the view differs from the base's type");
    if (b->kind == ColumnKind::kStatic || c.kind == ColumnKind::kStatic) {
      return Status::InvalidArgument("Cannot include static column '" + c.name + "' in materialized view '" + view.name + "'");
    }
    if (IsKey(c) && !IsKey(*b)) others.push_back(c.name);
  }
  std::vector<std::string> missing;
  for (const ColumnDef& b : base.columns) {
    if (!IsKey(b)) continue;
    const ColumnDef* c = view.FindColumn(b.name);
    if (!c || !IsKey(*c)) missing.push_back(b.name);
  }
  auto join = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  if (!missing.empty()) {
    return Status::InvalidArgument("Cannot create materialized view '" + view.name + "' without primary key columns " +
                                   join(missing) + " from base table '" + base.name + "'");
  }
  if (others.size() > 1) {
    return Status::InvalidArgument("Cannot include more than one non-primary key column in materialized view primary key (got " +
                                   join(others) + ")");
  }
  return Status::OK();
}

std::optional<ViewRow> ViewRowOf(const TableSchema& base, const TableSchema& view,
                                 const std::vector<std::string>& partition_key, const RowResult& row,
                                 uint32_t now_seconds) {
  ViewRow out;
  bool keyed_by_regular = false;
  uint32_t key_cell_expiry = 0;
  for (const ColumnDef& vc : view.columns) {
    const ColumnDef* bc = base.FindColumn(vc.name);
    if (!bc) return std::nullopt;  // the definition changed under us: no row rather than a wrong one
    if (IsKey(vc)) {
      std::string value;
      if (bc->kind == ColumnKind::kPartitionKey) {
        const size_t i = KeyPosition(base, *bc);
        if (i >= partition_key.size()) return std::nullopt;
        value = partition_key[i];
      } else if (bc->kind == ColumnKind::kClustering) {
        const size_t i = KeyPosition(base, *bc);
        if (i >= row.clustering.size()) return std::nullopt;
        value = row.clustering[i];
      } else {  // the one regular base column in the view's key: its cell, or no view row
        auto cell = std::find_if(row.cells.begin(), row.cells.end(),
                                 [&](const Cell& c) { return c.column_id == bc->id && !c.IsTombstone(); });
        if (cell == row.cells.end()) return std::nullopt;
        value = cell->value;
        keyed_by_regular = true;
        key_cell_expiry = CellExpiry(*cell);
      }
      (vc.kind == ColumnKind::kPartitionKey ? out.partition_key : out.clustering).push_back(std::move(value));
      continue;
    }
    for (const Cell& c : row.cells) {
      if (c.column_id != bc->id || c.IsTombstone() || c.IsComplexDeletion()) continue;
      ViewCell cell;
      cell.column_id = vc.id;
      cell.has_path = c.flags & Cell::kHasPath;
      cell.path = c.path;
      cell.value = c.value;
      cell.expiry = CellExpiry(c);
      out.cells.push_back(std::move(cell));
    }
  }
  if (keyed_by_regular) {
    out.expiry = key_cell_expiry;
  } else {
    // The base row's liveness: its marker, else its longest-lived cell.
    bool live = false;
    uint32_t expiry = 0;
    if (row.marker.IsLive(now_seconds)) {
      live = true;
      expiry = row.marker.ttl > 0 ? row.marker.expiry : 0;
    }
    for (const Cell& c : row.cells) {
      if (c.IsTombstone() || c.IsComplexDeletion()) continue;
      expiry = live ? Longer(expiry, CellExpiry(c)) : CellExpiry(c);
      live = true;
    }
    if (!live) return std::nullopt;
    out.expiry = expiry;
  }
  if (out.expiry != 0 && out.expiry <= now_seconds) return std::nullopt;
  // A cell outliving its row would keep the view row alive by itself.
  if (out.expiry != 0) {
    for (ViewCell& c : out.cells) c.expiry = c.expiry == 0 ? out.expiry : std::min(c.expiry, out.expiry);
  }
  std::sort(out.cells.begin(), out.cells.end());
  return out;
}

}  // namespace tessera
