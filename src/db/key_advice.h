// Key advice: the seeds' key-design fixes, proposed from live load.
//
// Each detected condition becomes one KeyAdvice row (system.key_advice):
//  - monotonic_leading_key (range tables): a tablet whose writes form an
//    append-only tail (tablets/balancer_policy.h IsAppendTail), judged over
//    at least KeySample::kTailLag sampled writes; names the
//    key column whose order the writes follow and the share of the table's
//    writes landing in its last tablet; proposes a hash prefix / buckets, a
//    key-order swap, bit-reversal or UUIDs.
//    Bucketed range tables get none: buckets are that fix. Instead,
//  - buckets: a `buckets = 'auto'` table whose count the balancer raised
//    (db/tablet_balancer.h): when, why, and that nothing needs changing.
//  - hot_partition: one partition carries at least half of a table's writes
//    (or reads) with at least kMinOperations counted; proposes N buckets in
//    the partition key and the expected spread.
//  - partition_near_limit: a partition measured at or above half of a
//    partition warn threshold (db/large_partitions.h); proposes a time bucket
//    in the partition key.
//  - tombstone_heavy: reads of the table visited more tombstones than the
//    warn threshold; proposes TTL instead of deletes.
//  - schema: the design lint's findings on the declared schema, before any
//    load (db/schema_lint.h).
//
// Thread safety: thread-safe (reads the database's thread-safe surfaces).
#pragma once

#include <string>
#include <vector>

namespace tessera {

class Database;

struct KeyAdvice {
  std::string keyspace, table;
  std::string kind;      // monotonic_leading_key, buckets, hot_partition, partition_buckets, partition_near_limit,
                         // tombstone_heavy, schema
  std::string subject;   // the column or partition key the advice is about
  double score = 0;      // the share (0..1) or the fraction of the threshold behind the condition
  std::string evidence;  // what was measured
  std::string advice;    // the proposed fix
};

inline constexpr uint64_t kMinOperations = 1000;  // before a partition is called hot

// The buckets proposed for a partition holding `share` (0..1) of a table's
// operations: the smallest power of two from 2 to 64 that leaves each bucket
// at most a tenth of them.
int BucketsForShare(double share);

std::vector<KeyAdvice> ComputeKeyAdvice(Database& db);

}  // namespace tessera
