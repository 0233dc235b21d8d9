// WHERE clauses of SELECT -> a read plan: what the storage serves directly
// (whole partitions by = / IN on the partition key; token ranges; key ranges
// on range tables; a clustering prefix and slice within partitions) and what
// is left to filter in memory.
//
// As in Cassandra, a query that would have to filter — a regular-column
// restriction, a partially restricted partition key, a clustering
// restriction without the full partition key, or a clustering column
// restricted after an unrestricted one — is refused without ALLOW FILTERING:
//   "Cannot execute this query as it might involve data filtering and thus may
//    have unpredictable performance. If you want to execute this query despite
//    the performance unpredictability, use ALLOW FILTERING"
// Tessera extension: on a range-distributed table with a one-column
// partition key, <, <=, >, >= on that column is a key-range scan.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/term_binder.h"
#include "db/mutation.h"
#include "db/reader.h"
#include "types/schema.h"

namespace tessera::cql {

// A restriction evaluated in memory: column index, operator, bound value(s).
struct Filter {
  size_t column = 0;
  Relation::Op op = Relation::Op::kEq;
  std::vector<std::string> values;  // one, or several for IN
  std::optional<std::string> map_key;  // m[key] = v
};

struct ReadPlan {
  enum class Kind { kPartitions, kRange };
  Kind kind = Kind::kRange;
  std::vector<std::vector<std::string>> partition_keys;  // kPartitions, sorted by storage position
  KeyRange range;                                         // kRange
  // Within partitions (kPartitions only): equal clustering prefixes (at least
  // one, possibly empty) and an optional slice after a single prefix.
  std::vector<std::vector<std::string>> clustering_prefixes{{}};
  std::optional<ClusteringBound> lower, upper;  // in clustering order
  std::vector<Filter> filters;
  bool uses_filtering = false;
};

// Errors: InvalidArgument in Cassandra's words (see above).
Result<ReadPlan> PlanRead(const TableSchema& table, const std::vector<Relation>& where, bool allow_filtering,
                          const BindContext& ctx);

}  // namespace tessera::cql
