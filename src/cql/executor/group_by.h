// GROUP BY (Cassandra 4.1 semantics, SelectStatement's aggregation
// specification): rows are grouped by the partition key and a prefix of the
// clustering key. The GROUP BY columns follow the primary key's order from its
// first column; a column restricted by `=` in the WHERE clause may be left out
// (it holds one value), and the partition key is grouped on whole. Groups are
// runs of consecutive result rows with equal key prefixes (rows come in
// partition, then clustering order), so grouping needs no sort. LIMIT, PER
// PARTITION LIMIT and the page size count groups.
//
// Paging (GroupPaging): a page ends at a group boundary and the next one
// resumes the read right after the last row of the page's last group (the
// executor's own paging state, taken there), so no page reads the rows of
// earlier pages again. The paging state is opaque to clients (format: u8
// version 1, u8 kind 5, varints groups returned and groups counted in the
// last group's partition, length-prefixed group keys of that group and its
// partition, then the read's paging state, source_rows.h).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "common/status.h"
#include "cql/executor/result_set.h"
#include "cql/parser/raw_statements.h"
#include "types/schema.h"

namespace tessera::cql {

struct GroupBy {
  size_t clustering_prefix = 0;  // clustering columns in the group key (0: one group per partition)
};

// The grouping of `stmt` (REQUIRES: !stmt.group_by.empty()). Errors (InvalidArgument, Cassandra's
// messages): unknown column; "Group by is currently only supported on the columns of the PRIMARY
// KEY, got X"; "Group by currently only support groups of columns following their declared order
// in the PRIMARY KEY"; "Group by is not supported on only a part of the partition key"; "Grouping
// on clustering columns is not allowed for SELECT DISTINCT queries".
Result<GroupBy> MakeGroupBy(const TableSchema& table, const SelectStatement& stmt);

// The groups of `rows` (in result order) as [begin, end) index ranges, in order.
std::vector<std::pair<size_t, size_t>> GroupRows(const TableSchema& table, const GroupBy& group,
                                                 const std::vector<SourceRow>& rows);

// Whether two rows are in the same partition (by the partition-key values).
bool SamePartition(const TableSchema& table, const SourceRow& a, const SourceRow& b);

// The values that make `row`'s group (GroupKey) or its partition
// (PartitionOf), as one comparable byte string: equal for rows of one group
// (one partition), different otherwise.
std::string GroupKey(const TableSchema& table, const GroupBy& group, const SourceRow& row);
std::string PartitionOf(const TableSchema& table, const SourceRow& row);

// Where a GROUP BY query's next page starts.
struct GroupPaging {
  uint64_t groups_returned = 0;      // groups counted toward LIMIT by earlier pages
  uint64_t groups_in_partition = 0;  // groups counted in last_partition before the resume point
  std::string last_group;            // GroupKey of the group the read stopped after (rows of it are skipped)
  std::string last_partition;        // PartitionOf that group
  std::string read;                  // the executor's paging state (EncodePaging) at the resume point
};
std::string EncodeGroupPaging(const GroupPaging& p);
// Errors: InvalidArgument "Invalid paging state".
Result<GroupPaging> DecodeGroupPaging(const std::string& s);

}  // namespace tessera::cql
