// Rows of a SELECT before projection: stored rows turned into SourceRows
// (result_set.h), the in-memory restrictions of a read plan checked on them,
// and the SELECT paging state. Shared by the table scan (select_statement.cc)
// and the secondary-index scan (index_scan.h).
//
// Paging state (native protocol v4 §8: opaque to clients): u8 version 1, u8
// kind, varints partition index, prefix index, rows returned so far, rows in
// the current partition, then a cursor whose form the kind decides (0: plan
// partitions, 1: range scan, 2: system table, 3: GROUP BY, 4: index scan).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/read_plan.h"
#include "cql/executor/result_set.h"
#include "db/reader.h"
#include "types/schema.h"

namespace tessera::cql {

// The row of partition `pk` from its stored row (nullptr: a partition with
// only static values) and static row, cell values assembled per column
// (non-frozen collections and UDTs from their element cells), with write
// times and TTLs left (now: seconds since the epoch).
SourceRow MakeRow(const TableSchema& t, const std::vector<std::string>& pk, const RowResult* row,
                  const RowResult* static_row, uint32_t now);

// Whether `row` passes every filter of `plan`.
bool MatchesAll(const TableSchema& t, const ReadPlan& plan, const SourceRow& row);
// Whether `row` lies in the plan's clustering prefixes and slice (kPartitions plans).
bool WithinClustering(const TableSchema& t, const ReadPlan& plan, const SourceRow& row);

struct PagingState {
  uint64_t partition = 0, prefix = 0, rows_so_far = 0, rows_in_partition = 0;
  std::string cursor;
};

std::string EncodePaging(const PagingState& p, uint8_t kind);
// Errors: InvalidArgument "Invalid paging state" (another version or kind, truncated).
Result<PagingState> DecodePaging(const std::string& s, uint8_t kind);

}  // namespace tessera::cql
