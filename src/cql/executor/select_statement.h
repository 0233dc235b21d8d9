// SELECT: plan (read_plan.h), read from the table or a virtual table, filter,
// apply PER PARTITION LIMIT and LIMIT, project (columns, aliases, WRITETIME,
// TTL, token(), count(*), count/min/max/sum/avg, selection.h) and page.
// GROUP BY (group_by.h) folds the rows per group and counts LIMIT, PER
// PARTITION LIMIT and pages in groups; a page ends at a group boundary and
// the next one resumes the read after it (GroupPaging, kind 5). Through a
// secondary index over the whole table, the paging state (kind 3) holds the
// groups returned and each page reads the query again. Refused on system tables.
//
// Paging (native protocol v4 §8): with a page size, a page holds at most that
// many rows and, when more may follow, a paging state that resumes exactly
// after the last row returned (stable while writes go on; see db/reader.h).
// The paging state is opaque to clients (format: u8 version 1, u8 kind,
// varints partition index, prefix index, rows returned so far, rows in the
// current partition, then the storage cursor).
//
// Rows come in storage order: by token (hash tables) or key (range tables),
// then clustering order, or its reverse with ORDER BY on the clustering
// columns reversed (which needs the partition key restricted by = or IN).
//
// Thread safety: ExecuteSelect is reentrant.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/index_scan.h"
#include "cql/executor/replayed_read.h"
#include "cql/executor/result_set.h"
#include "cql/executor/term_binder.h"
#include "cql/functions/user_functions.h"
#include "cql/parser/raw_statements.h"
#include "coordinator/coordinator.h"
#include "db/database.h"

namespace tessera::cql {

// Tables whose rows are computed, not stored (system.local, system_schema.*).
class VirtualTables {
 public:
  virtual ~VirtualTables() = default;
  // nullptr when (keyspace, table) is not virtual.
  virtual std::shared_ptr<const TableSchema> Find(const std::string& keyspace, const std::string& table) const = 0;
  // All rows, in primary-key order.
  virtual Result<std::vector<SourceRow>> Rows(const TableSchema& table) const = 0;
  // At least the rows of these partitions (serialized partition key values,
  // as ReadPlan::partition_keys), in primary-key order; the caller filters.
  // By default every row.
  virtual Result<std::vector<SourceRow>> PartitionRows(const TableSchema& table,
                                                       const std::vector<std::vector<std::string>>& partition_keys) const {
    return Rows(table);
  }
};

// A SELECT's reads done without holding a thread (issue 28 item 1). A first
// ExecuteSelect with SelectContext::defer_read stops at its first storage
// read when the statement's reads are known before they run: whole rows
// (full primary keys, IN on partition and clustering columns included, at
// most kMaxDeferredRows of them, a table without static columns), or one
// slice of each partition (one partition key or an IN of at most
// kMaxDeferredSlices; one clustering prefix or range; no filtering, so that
// the slices' rows are all the statement reads; each slice brings its
// partition's static row). The reads' keys (and the slices' requests) go
// into the slot and ExecuteSelect fails with an error the caller ignores
// once it sees `table` set. The caller reads them all at once
// (Coordinator::ReadRowAsync, ReadSliceAsync) and runs the statement again,
// without defer_read and with every `result` filled in, which those same
// reads take instead of reading (any other read reads as usual): a slice
// asked with a larger limit than the second run's read is cut to it. What
// comes before the reads is pure (binding, planning), so the first run
// costs CPU only. A deferred read the second run does not need (a LIMIT or
// page met first) was made for nothing, as Cassandra reads every partition
// of an IN. A page of a scan (a token range or the whole table) is
// deferred too, one range read
// (Coordinator::ScanRangeAsync) at a time: when a filter leaves that read short
// of the page, the second run stops before the next read with the rows so
// far and the paging state to read on from (DeferredRead::paused), and the
// caller reads the rest of the page in further steps (FoldSelectStep), each
// deferring its one read, so that no step waits on a thread. An aggregate
// (no GROUP BY) reads without a limit, in one read; over filtered rows with
// PER PARTITION LIMIT, which could leave a slice short, it is not deferred.
// A page read through a secondary index over the whole table (not with
// GROUP BY) is deferred as one scan (DeferredIndexScan), which the caller
// reads with RunIndexScanAsync.
struct DeferredRow {
  std::vector<std::string> partition_key, clustering;
  std::optional<Result<std::optional<RowResult>>> result;  // the read's outcome, for the second run
  bool taken = false;                                      // by the second run
};

struct DeferredSlice {
  std::vector<std::string> partition_key;
  SliceRequest request;
  std::optional<Result<SliceResult>> result;  // the read's outcome, for the second run
  bool taken = false;                         // by the second run
};

// A page of a secondary-index scan (index_scan.h), read whole by the
// caller (RunIndexScanAsync) with what RunIndexScan would be given.
struct DeferredIndexScan {
  IndexChoice choice;
  IndexScanLimits limits;
  PagingState state;
  std::optional<Result<IndexScanResult>> result;  // the scan's outcome, for the second run
};

struct DeferredRead {
  static constexpr size_t kMaxDeferredRows = 64;
  static constexpr size_t kMaxDeferredSlices = 16;
  std::shared_ptr<const TableSchema> table;  // null: nothing deferred
  std::vector<DeferredRow> rows;             // row reads; or
  std::vector<DeferredSlice> slices;         // slice reads, one per partition; or
  std::optional<RangeRequest> range;         // a scan's page
  std::optional<Result<RangeResult>> range_result;  // its outcome, for the second run; or
  std::optional<DeferredIndexScan> index_scan;      // an index scan's page
  // The first run left the static row to a slice read it expected to defer,
  // and then read nothing (the page was already full): its rows lack their
  // static values, so the caller runs the statement again without deferral.
  bool static_skipped = false;
  // Set by a second run that took the scan's page and stopped before a
  // further range read: its result is one step of the page (FoldSelectStep).
  bool paused = false;
  // Replay (replayed_read.h): GROUP BY on a cluster node, and any SELECT
  // whose first run reaches a read it does not defer (an IN of more than
  // kMaxDeferredRows rows, an IN on the clustering key of a table with
  // static columns, ...; not on a table with buckets or partition buckets,
  // whose asynchronous reads read on the calling thread), which then sets it.
  // Every run takes its reads from `replayed`; one it finds unanswered there
  // it records (setting `table`) and takes as empty, up to
  // kMaxReplayedMisses a run; the caller reads the unanswered ones and runs
  // the statement again (with `table` cleared) until a run sets it no more.
  // The other slots are not used then.
  static constexpr size_t kMaxReplayedMisses = 256;
  bool replay = false;
  std::vector<ReplayedRead> replayed;
  // Tombstones visited and rows returned by the steps of this page so far:
  // the guardrails (tombstone_warn, tombstone_fail) apply to the page once,
  // in the step that ends it. Carried from step to step by FoldSelectStep.
  uint64_t earlier_tombstones = 0, earlier_rows = 0;
};

struct SelectContext {
  BindContext bind;
  std::string keyspace;                     // current keyspace
  int32_t page_size = 0;                    // rows; <= 0: no paging
  std::optional<std::string> paging_state;  // from the previous page
  // Read guardrails: tombstone_warn (a client warning and a log line above
  // it) and tombstone_fail (ReadFailure above it); db/guardrails.h.
  Guardrails guardrails;
  // The request's consistency level, for every read of the table.
  RequestConsistency consistency;
  // User-defined functions and aggregates the selection may call (null: none).
  const UserFunctions* functions = nullptr;
  // See DeferredRead; null: every read is done here.
  DeferredRead* deferred = nullptr;
  bool defer_read = false;
};

// A read that scanned more tombstones than tombstone_fail fails with this
// message (mapped to ReadFailure 0x1300 by the caller).
inline constexpr const char* kTombstoneOverwhelming = "Scanned over the tombstone failure threshold";

// Errors: InvalidArgument (unknown table or column, unsupported or
// filtering-requiring query without ALLOW FILTERING, bad paging state),
// storage errors.
Result<ResultSet> ExecuteSelect(Coordinator& coordinator, const VirtualTables* virtual_tables, const SelectStatement& stmt,
                                const SelectContext& ctx);

// One step of a SELECT page read in steps (DeferredRead::paused): appends
// `step` (the rows, warnings and paging state of a second run) to *page
// (empty before the first step). When the step paused and the page wants
// more rows, sets up `ctx` for the next step (its paging state, the page
// size still wanted of `page_size`, the request's; a fresh *ctx->deferred
// carrying the guardrails' tallies; defer_read) and returns true: the caller
// runs the statement again, reads what that run defers and runs it again,
// then folds that step. Else the page is complete: returns false.
// REQUIRES: ctx->deferred is the slot the step ran with.
bool FoldSelectStep(ResultSet step, int32_t page_size, SelectContext* ctx, std::optional<ResultSet>* page);

// Result-set columns of a SELECT on `table` (for PREPARED metadata).
Result<std::vector<ColumnSpec>> SelectColumns(const TableSchema& table, const SelectStatement& stmt,
                                              const UserFunctions* functions = nullptr);

}  // namespace tessera::cql
