// CREATE TABLE text for a redesigned table: the columns, key, clustering
// order and distribution of an existing table, with added key columns and
// another partition key — the DDL that key advice, the design lint and the
// Key Visualizer propose. Other options are not carried over.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "types/schema.h"

namespace tessera {

// `added_columns`: (name, CQL type) declared before the table's own columns.
// `partition_key`: column names, in order (added or existing).
std::string RedesignedTableCql(const TableSchema& table, const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& added_columns,
                               const std::vector<std::string>& partition_key, Distribution distribution);

}  // namespace tessera
