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
// Thread safety: reentrant, as reader.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/reader.h"

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

}  // namespace tessera
