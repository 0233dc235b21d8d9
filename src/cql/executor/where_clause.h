// WHERE clauses of UPDATE and DELETE: which partitions and rows a write
// touches, as Cassandra restricts them:
//  - every partition-key column by = or IN ("Some partition key parts are
//    missing: k"); IN values multiply into several partitions;
//  - UPDATE: every clustering column by = or IN ("Some clustering keys are
//    missing: c");
//  - DELETE: a prefix of clustering columns by = (or IN), and optionally a
//    slice (<, <=, >, >=) on the next one: a range deletion;
//  - nothing else ("Non PRIMARY KEY columns found in where clause: v").
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/term_binder.h"
#include "db/mutation.h"
#include "types/schema.h"

namespace tessera::cql {

struct WriteTarget {
  std::vector<std::vector<std::string>> partition_keys;  // full keys, serialized
  std::vector<std::vector<std::string>> clustering;      // full keys or (DELETE) equal prefixes
  bool full_clustering = false;                          // clustering holds full keys (rows)
  std::optional<ClusteringBound> slice_start, slice_end;  // DELETE range on the column after the prefix
};

// kStaticUpdate: an UPDATE that sets only static columns, which leaves the
// clustering key out (Cassandra refuses clustering restrictions there).
enum class WriteKind { kUpdate, kStaticUpdate, kDelete };

// Errors: InvalidArgument in Cassandra's words.
Result<WriteTarget> AnalyzeWriteWhere(const TableSchema& table, const std::vector<Relation>& where, WriteKind kind,
                                      const BindContext& ctx);

// Every combination of one value per column, in order (IN on several key
// columns multiplies into several keys).
std::vector<std::vector<std::string>> CartesianProduct(const std::vector<std::vector<std::string>>& columns);

// The values of `column = v` or `column IN (...)` / `IN ?`, serialized.
Result<std::vector<std::string>> EqualityValues(const Relation& r, const ColumnDef& column, const BindContext& ctx);

}  // namespace tessera::cql
