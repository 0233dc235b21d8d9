// Range scans over a bucketed table (TableSchema::buckets): one stream per
// bucket that can hold rows of the range, merged in partition-key order.
//
// The request's key range and cursor are logical (keys/storage_key.h: the
// bucket bytes dropped). For each bucket version whose key range meets the
// request, each of its buckets is scanned over the physical form of the
// intersection, with the request's LIMIT pushed into every stream (the first
// LIMIT rows overall are among the first LIMIT rows of the streams); versions
// the range or the cursor has passed are not read. The partitions come back in
// logical order and the cursor names the logical key of the last row returned,
// so every stream resumes exactly after it: each partition lives in exactly one
// bucket, so "after this key" means the same thing in every stream.
//
// Cost: a page of L rows reads up to L rows from each of the streams it opens,
// one after the other (ScanBuckets) or all at once (ScanBucketsAsync).
//
// Thread safety: reentrant, as reader.h.
#pragma once

#include "common/status.h"
#include "db/reader.h"

namespace tessera {

// REQUIRES: ctx.table->buckets.enabled(). Errors as ScanRange.
Result<RangeResult> ScanBuckets(const ReadContext& ctx, const RangeRequest& request);
// As ScanBuckets, answering through `done` exactly once, as ScanRangeAsync
// (db/reader.h): every bucket's scan is asked at once
// (ScanStorageRangeAsync), and the last to answer merges the page, on its
// thread. REQUIRES: as ScanBuckets, and what ctx.tablets() and the replicas
// use outlives the answer.
void ScanBucketsAsync(const ReadContext& ctx, const RangeRequest& request, RangeDone done);

}  // namespace tessera
