// ResultSet: what a SELECT returns before it is encoded as RESULT/Rows
// (native protocol v4 §4.2.5.2): column specs, rows of serialized cells
// (nullopt = null), and the paging state when more rows follow.
//
// SourceRow: one row of a table in column order of its schema, as the row
// sources (storage reads, system tables) produce it for filtering and
// projection; per column the cell's write time (microseconds) and TTL
// (remaining seconds) when known.
//
// Thread safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cql/protocol/responses.h"

namespace tessera::cql {

struct ResultSet {
  std::vector<ColumnSpec> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::optional<std::string> paging_state;
  std::vector<std::string> warnings;  // sent to the client with the response (Warning flag)
};

struct SourceRow {
  std::vector<std::optional<std::string>> values;  // by schema column index
  std::vector<std::optional<int64_t>> writetime;   // microseconds, per column
  std::vector<std::optional<int32_t>> ttl;         // remaining seconds, per column
  bool static_only = false;                        // a partition with no rows but a static row
};

}  // namespace tessera::cql
