// Materialized views as Cassandra 4.1 and ScyllaDB define them (CREATE
// MATERIALIZED VIEW ... AS SELECT ... FROM base WHERE ... IS NOT NULL
// PRIMARY KEY (...)): a view is an ordinary table (TableSchema::view set) with
// tablets of its own, so it splits, merges and moves like any table; its
// primary key holds every primary key column of the base and at most one other
// base column, so one base row gives at most one view row.
//
// This file holds the pure parts: the checks of a view's definition against
// its base, and the view row of one base row. Keeping the view rows right on
// every base write is the coordinator's job (coordinator/view_maintenance.cc),
// as it is for secondary indexes.
//
// Thread safety: pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/reader.h"
#include "types/schema.h"

namespace tessera {

// Checks `view` (columns named as the base columns they copy, kinds and key
// order set, `view->view` filled in) against `base`, in Cassandra 4.1's words:
// no counter table, no view of a view, columns of the base's names and
// types, no static column, every base primary key column in the view's
// primary key and at most one other base column there. (Which types may be
// key columns is the executor's and TableSchema::Validate's check.)
// Errors: InvalidArgument.
Status ValidateViewDefinition(const TableSchema& base, const TableSchema& view);

// One cell of a view row: a base cell under the view column's id.
struct ViewCell {
  uint32_t column_id = 0;  // the view's column id
  bool has_path = false;   // an element of a multi-cell collection or user type
  std::string path;
  std::string value;
  uint32_t expiry = 0;     // seconds since the epoch; 0: never
  auto operator<=>(const ViewCell&) const = default;
};

// The view row one base row gives.
struct ViewRow {
  std::vector<std::string> partition_key;  // the view's, serialized, key order
  std::vector<std::string> clustering;     // the view's full clustering key
  // When the view row stops being live: the expiry of the base column in the
  // view's key when there is one, else of the base row's liveness (its marker
  // or its longest-lived cell). Seconds since the epoch; 0: never.
  uint32_t expiry = 0;
  std::vector<ViewCell> cells;  // by view column id, then path
  auto operator<=>(const ViewRow&) const = default;
  bool SameKey(const ViewRow& o) const { return partition_key == o.partition_key && clustering == o.clustering; }
};

// The view row of base row `row` (live cells only, as reads return them) of
// partition `partition_key`, or nullopt when a view key column would be null
// (the view's IS NOT NULL) or the row is not live at `now_seconds`.
// REQUIRES: ValidateViewDefinition(base, view) passed.
std::optional<ViewRow> ViewRowOf(const TableSchema& base, const TableSchema& view,
                                 const std::vector<std::string>& partition_key, const RowResult& row,
                                 uint32_t now_seconds);

}  // namespace tessera
