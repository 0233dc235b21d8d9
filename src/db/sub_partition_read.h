// Reads of a partition-bucketed table (TableSchema::partition_buckets): the
// rows of a partition live in its sub-partitions [0, span), each a partition
// position of its own that may sit on another tablet (keys/storage_key.h).
//
// A slice opens one stream per sub-partition, each bounded to the slice, and
// merges them in clustering order (descending for reversed slices) by the
// encoded clustering key, which sorts as the clustering order; a row found in
// several sub-partitions (written under different counts of its history) is
// reconciled as the merge operator would (ReconcileRow) before the header's
// deletions and TTL apply. The header and the static row are read from
// sub-partition 0, so partition and range deletions and static columns keep
// whole-partition meaning. A point read looks the row up in the sub-partition
// of each count of the history.
//
// Cursors are logical: the key of the last row returned without the
// sub-partition bytes (position | kind | clustering), so every stream resumes
// strictly after it. Range scans walk logical partitions in order and read
// each as a merged slice, with LIMIT and PER PARTITION LIMIT pushed into it.
//
// Cost: a slice first probes which of its sub-partitions hold keys of the
// slice, with one iterator per tablet (a seek per sub-partition, skipping
// those a seek passed over), and opens a stream for each that does; it reads
// at most L rows (plus equal keys) from each stream, and picking the next row
// compares the streams' heads. A slice of one whole clustering key opens only
// the sub-partitions of its history's counts.
//
// The asynchronous point read, slice and scan (db/sub_partition_read_async.cc)
// ask the same keys as chains of callbacks that hold no thread (issue 28 item
// 1): a point read's keys in one request per tablet, a slice's header and
// static row with every sub-partition's first window at once, and each next
// window of a sub-partition when the merge has used up its last one; a scan
// finds each next partition with a window of one key and reads it so.
//
// Thread safety: reentrant, as reader.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/reader.h"
#include "storage/row_fragment.h"

namespace tessera {

// REQUIRES for all three: ctx.table->partition_buckets.enabled(), and ctx.table
// the current schema (Database::CurrentLayout). Errors as ReadRow, ReadSlice
// and ScanRange in reader.h.
Result<std::optional<RowResult>> ReadSubPartitionedRow(const ReadContext& ctx,
                                                       const std::vector<std::string>& partition_key,
                                                       const std::vector<std::string>& clustering);
Result<SliceResult> ReadSubPartitionedSlice(const ReadContext& ctx, const std::vector<std::string>& partition_key,
                                            const SliceRequest& request);
Result<RangeResult> ScanSubPartitioned(const ReadContext& ctx, const RangeRequest& request);

// As ReadSubPartitionedRow and ReadSubPartitionedSlice, answering through
// `done` exactly once, on this thread or on the thread a tablet replica
// answers on (Replica::MultiGetAsync, ReadWindowAsync), as ReadRowAsync and
// ReadSliceAsync in reader.h; the slice carries the static row on every page,
// as ReadSliceAsync's does, and its row_keys are logical keys (what its
// cursor names). REQUIRES: as the blocking ones, and what ctx.tablets() and
// the replicas use outlives the answer.
void ReadSubPartitionedRowAsync(const ReadContext& ctx, const std::vector<std::string>& partition_key,
                                const std::vector<std::string>& clustering, RowDone done);
void ReadSubPartitionedSliceAsync(const ReadContext& ctx, const std::vector<std::string>& partition_key,
                                  const SliceRequest& request, SliceDone done);
// As ScanSubPartitioned, answering through `done` exactly once, as
// ScanRangeAsync (db/reader.h); unlike ScanSubPartitioned, the partition a
// page resumes inside comes with its static row too, as ScanRangeAsync's
// does. REQUIRES: as ScanSubPartitioned, and what ctx.tablets() and the
// replicas use outlives the answer.
void ScanSubPartitionedAsync(const ReadContext& ctx, const RangeRequest& request, RangeDone done);

// Shared by the blocking and the asynchronous reads.
//
// The sub-partitions a slice of the partition at logical position `logical`
// must read, ascending: for one whole clustering key (`lo` its storage key)
// only those of the counts in the partition's history, else all of [0, span).
std::vector<uint32_t> SubPartitionsOf(const TableSchema& t, const std::string& logical, const SliceRequest& request,
                                      const std::string& lo);
// The bounds [*from, *to) of the slice [lo, hi) of `logical` (logical
// storage keys; `resume`, when not empty, the logical key the slice resumes
// strictly after, or before when reversed) within the sub-partition at
// `position`; false when they hold no key.
// Folds the stored row `value` into *row: the first fragment found
// (`*found` false) becomes it, a later one (the same row under another count
// of the history) is reconciled into it; sets *found. Errors: Corruption.
Status FoldRowFragment(std::string_view value, RowFragment* row, bool* found);
// A scan's paging cursor: the logical key it names (a static or clustering
// row of this table within `request`'s range) into *resume_key, the
// partition's logical position into *resume_position, the rows of that
// partition already returned into *rows_in_partition. Errors:
// InvalidArgument "invalid paging cursor".
Status DecodeSubPartitionedScanCursor(const TableSchema& t, const RangeRequest& request, uint64_t* rows_in_partition,
                                      std::string* resume_key, std::string* resume_position);
bool SubPartitionSliceBounds(const std::string& logical, const std::string& position, const std::string& lo,
                             const std::string& hi, const std::string& resume, bool reversed, std::string* from,
                             std::string* to);

}  // namespace tessera
