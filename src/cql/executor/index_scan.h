// SELECT through a secondary index (db/secondary_index.h), as ScyllaDB reads
// a global index: the index partition of the restricted value is read in
// order (base partition key, then clustering), each entry's base row is read
// and every restriction of the query checked on it again, so an entry left
// behind by a lost race or an expired row is skipped rather than returned.
//
// Which restriction an index serves (Cassandra 4.1):
//   col = v          an index on a regular, static, clustering or partition-key
//                    column, or full() of a frozen collection
//   col CONTAINS v   values() of a non-frozen list, set or map
//   col CONTAINS KEY k   keys() of a map
//   col[k] = v       entries() of a map
// The other restrictions must not need filtering on their own (or the query
// says ALLOW FILTERING). With the whole partition key restricted by = / IN the
// partitions are read directly and the indexed restriction filtered there,
// needing no ALLOW FILTERING either; token() restrictions and key ranges of
// range tables leave the index unused.
//
// Paging: kind 4; the cursor is the last index entry consumed (its clustering
// components), so a page resumes just after it whatever was written since.
// A page of an index on a static column holds whole partitions (possibly more
// rows than the page size). ORDER BY is refused, as in Cassandra.
//
// Issue 28 item 1: on a cluster node the query processor reads an index
// scan's page with RunIndexScanAsync, holding no thread while replicas answer.
//
// Thread safety: reentrant.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/read_plan.h"
#include "cql/executor/source_rows.h"
#include "coordinator/coordinator.h"
#include "db/database.h"

namespace tessera::cql {

struct IndexChoice {
  std::shared_ptr<const TableSchema> backing;  // the index's table
  IndexDef index;
  std::vector<std::string> value;  // the index partition to read
  ReadPlan plan;                   // every restriction of the query (re-checked on each base row)
  bool within_partitions = false;  // whole partition key restricted: run `plan` as a partition read
};

// nullopt when no index serves `where`. Errors: those of PlanRead (a
// restriction beside the indexed one that needs ALLOW FILTERING, bad values).
Result<std::optional<IndexChoice>> ChooseIndex(Database& db, const TableSchema& table, const std::vector<Relation>& where,
                                               bool allow_filtering, const BindContext& ctx);

struct IndexScanLimits {
  uint64_t limit = UINT64_MAX;          // LIMIT
  uint64_t per_partition = UINT64_MAX;  // PER PARTITION LIMIT
  uint64_t page = UINT64_MAX;           // page size (ignored with keep_all)
  bool keep_all = false;                // aggregates and GROUP BY: every row, no paging
};

// Appends the matching rows of the scan resumed at `state` to `out`; sets
// `*next` when another page may follow. REQUIRES: !choice.within_partitions.
// Errors: storage errors; InvalidArgument for a paging state of another query.
Status RunIndexScan(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, const IndexChoice& choice,
                    const IndexScanLimits& limits, PagingState state, const BindContext& bind,
                    const RequestConsistency& consistency, std::vector<SourceRow>* out,
                    std::optional<std::string>* next);

// One page of an index scan read by RunIndexScanAsync: the rows and the
// paging state (nullopt: the last page), as RunIndexScan gives them.
struct IndexScanResult {
  std::vector<SourceRow> rows;
  std::optional<std::string> next;
};
using IndexScanDone = std::function<void(Result<IndexScanResult>)>;

// As RunIndexScan (the same rows and paging state), answering through
// `done` exactly once, on this thread or on the thread a replica's answer
// arrives on (Coordinator::ReadSliceAsync, ReadRowAsync), so that no thread
// waits for another node (issue 28 item 1; index_scan_async.cc). The base
// rows of an index slice's entries are read together, as many at once as
// the page still wants (at most 128); a base row of a table with static
// columns is a one-row slice, which brings its static row. `now_micros`:
// the statement's time (BindContext::now_micros), for TTLs. Errors: as
// RunIndexScan's. REQUIRES: !choice.within_partitions; `db` outlives the
// answer.
void RunIndexScanAsync(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, IndexChoice choice,
                       const IndexScanLimits& limits, PagingState state, int64_t now_micros,
                       const RequestConsistency& consistency, IndexScanDone done);

}  // namespace tessera::cql
