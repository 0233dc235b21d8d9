// Reads: one row, a slice of one partition, a range of partitions.
//
// Every read sees the data as of one RocksDB snapshot per tablet segment it
// visits, reconciles fragments (merge operator), applies partition, range
// and row deletions, and drops expired TTL data as of `now`. Rows with no
// live marker and no live cell are not returned.
//
// Paging: results carry an opaque cursor (empty when the read is complete).
// A cursor names the last storage key returned; the next page starts
// strictly after it on a fresh snapshot, so paging stays correct while
// writes, splits and merges go on: rows present throughout are returned
// exactly once and in order. Cursor format (opaque to clients, stable within
// a version): u8 version=1, varint rows already returned in the cursor's
// partition, then the key. A cursor comes back from clients, so it is
// checked: a key outside the slice or range it was made for (or not of this
// table) is InvalidArgument "invalid paging cursor".
//
// Thread safety: the functions are reentrant; results are plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/mutation.h"
#include "keys/token.h"
#include "storage/row_fragment.h"
#include "tablets/tablet_map.h"
#include "types/schema.h"

namespace tessera {

struct RowResult {
  std::vector<std::string> clustering;  // serialized components; empty for the static row
  bool is_static = false;
  LivenessInfo marker;                  // the row marker, if live
  std::vector<Cell> cells;              // live cells, by column id then element path
};

struct PartitionResult {
  std::vector<std::string> partition_key;  // serialized components
  Token token = 0;                         // hash tables only
  std::optional<RowResult> static_row;     // a scan's: on every page that holds the partition; a slice's: see ReadSlice, ReadSliceAsync
  std::vector<RowResult> rows;
};

// Clustering bounds in clustering order (ClusteringBound: empty prefix = unbounded).
struct SliceRequest {
  ClusteringBound lower;
  ClusteringBound upper;
  bool reversed = false;       // newest-first for DESC-minded queries: from upper down to lower
  size_t limit = SIZE_MAX;     // rows
  std::string cursor;          // from a previous SliceResult
};

struct SliceResult {
  PartitionResult partition;
  std::string next_cursor;     // empty: no more rows
  // The rows' storage keys, in order: filled by ReadSliceAsync only (so that
  // a deferred slice can be cut to a smaller limit, cql/executor/select_statement.h).
  std::vector<std::string> row_keys;
  uint64_t tombstones_scanned = 0;  // deleted rows, cell tombstones and expired cells visited
};

// A range of storage keys [begin, end) covering whole partitions.
struct KeyRange {
  std::string begin;
  std::string end;
};

KeyRange WholeTableRange(const TableSchema& table);
// Partitions whose token lies between the bounds (hash tables).
KeyRange TokenRange(const TableSchema& table, Token start, bool start_inclusive, Token end, bool end_inclusive);
// Partitions whose key lies between the bounds (nullptr = unbounded); for
// range tables this is key order, for hash tables it is token order and only
// meaningful with equal bounds. Errors: InvalidArgument for a bad key.
Result<KeyRange> PartitionKeyRange(const TableSchema& table, const std::vector<std::string>* start,
                                   bool start_inclusive, const std::vector<std::string>* end, bool end_inclusive);

struct RangeRequest {
  KeyRange range;
  size_t limit = SIZE_MAX;                // rows (a partition with only a static row counts as one)
  size_t per_partition_limit = SIZE_MAX;  // rows per partition
  std::string cursor;
};

struct RangeResult {
  std::vector<PartitionResult> partitions;
  std::string next_cursor;  // empty: no more rows
  size_t rows = 0;
  uint64_t tombstones_scanned = 0;  // as in SliceResult
};

// What a read needs from the database: the schema, a way to get the current
// tablet map (looked up again for each tablet segment), and the time.
struct ReadContext {
  std::shared_ptr<const TableSchema> table;
  std::function<std::shared_ptr<const TabletMap>()> tablets;
  // Who serves this read's requests to a tablet (Database::MakeReadContext:
  // this node's replica; Coordinator::ContextOf: on a cluster node a
  // replicated tablet's coordinator made for the read); called once per
  // tablet and step the read reaches.
  std::function<std::shared_ptr<Replica>(const Tablet&)> replica_of;
  int64_t now_micros = 0;
  // The request's consistency, handed to every tablet replica the read asks.
  RequestConsistency consistency;
  // Called with the partition position of every point or slice read (hot-partition tracking); may be empty.
  std::function<void(std::string_view position)> count_partition_read;
};

// Paging cursors (the format above). DecodePagingCursor errors: InvalidArgument "invalid paging cursor".
std::string EncodePagingCursor(uint64_t rows_in_partition, std::string_view key);
Status DecodePagingCursor(std::string_view cursor, uint64_t* rows_in_partition, std::string* key);

// Errors: InvalidArgument (bad key), Corruption / IOError from storage.
//
// Bucketed tables (TableSchema::buckets): key ranges and cursors of ScanRange
// are logical (keys/storage_key.h) and the scan fans out over the buckets
// (db/bucketed_scan.h); ReadRow and ReadSlice read the one bucket a partition
// lives in. ctx.table must carry the current bucket layout.
// Partition-bucketed tables (TableSchema::partition_buckets): all three merge
// the sub-partitions of each partition (db/sub_partition_read.h), and their
// cursors name logical keys (without the sub-partition).
Result<std::optional<RowResult>> ReadRow(const ReadContext& ctx, const std::vector<std::string>& partition_key,
                                         const std::vector<std::string>& clustering);
// As ReadRow, answering through `done`: exactly once, on this thread or on
// the thread the tablet replica answers on (Replica::MultiGetAsync), so that
// no thread waits for another node (issue 28 item 1); a partition-bucketed
// table's row as ReadSubPartitionedRowAsync (db/sub_partition_read.h).
// REQUIRES: what ctx.tablets() and the replicas use outlives the answer.
using RowDone = std::function<void(Result<std::optional<RowResult>>)>;
void ReadRowAsync(const ReadContext& ctx, const std::vector<std::string>& partition_key,
                  const std::vector<std::string>& clustering, RowDone done);
Result<SliceResult> ReadSlice(const ReadContext& ctx, const std::vector<std::string>& partition_key,
                              const SliceRequest& request);
// As ReadSlice, answering through `done` exactly once, on this thread or on
// the thread a tablet replica answers on (Replica::ReadWindowAsync,
// MultiGetAsync; db/slice_read_async.cc): the partition header with the
// static row and the first window of rows are asked together, and no window
// asks for more keys than the rows still wanted. Unlike ReadSlice, the
// result carries the static row on every page, not only the first (a paged
// SELECT shows it with every row). A partition-bucketed table's slice as
// ReadSubPartitionedSliceAsync (db/sub_partition_read.h). REQUIRES: what
// ctx.tablets() and the replicas use outlives the answer.
using SliceDone = std::function<void(Result<SliceResult>)>;
void ReadSliceAsync(const ReadContext& ctx, const std::vector<std::string>& partition_key,
                    const SliceRequest& request, SliceDone done);
Result<RangeResult> ScanRange(const ReadContext& ctx, const RangeRequest& request);
// As ScanRange, answering through `done` exactly once, on this thread or on
// the thread a tablet replica answers on (Replica::ReadWindowAsync,
// MultiGetAsync; db/range_read_async.cc): each tablet segment in windows
// that bring the partitions' headers and static rows with their rows, so
// that no partition costs a read of its own. The same result as ScanRange
// (whose pages, resumed inside a partition or not, bring each partition's
// static row). A bucketed table's scan as ScanBucketsAsync
// (db/bucketed_scan.h), a partition-bucketed table's as
// ScanSubPartitionedAsync (db/sub_partition_read.h). REQUIRES: what ctx.tablets() and the replicas use outlives the answer.
using RangeDone = std::function<void(Result<RangeResult>)>;
void ScanRangeAsync(const ReadContext& ctx, const RangeRequest& request, RangeDone done);
// ScanRange and ScanRangeAsync over storage keys as they are (physical keys
// and cursors, no fan-out over buckets).
Result<RangeResult> ScanStorageRange(const ReadContext& ctx, const RangeRequest& request);
void ScanStorageRangeAsync(const ReadContext& ctx, const RangeRequest& request, RangeDone done);

}  // namespace tessera
