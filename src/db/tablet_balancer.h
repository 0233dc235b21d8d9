// TabletBalancer: the background thread that makes tablets manage
// themselves. Every BalancerOptions::interval_micros it
//  1. gathers each table's tablet loads (Database::TabletLoads) and asks the
//     policy (tablets/balancer_policy.h) what to do;
//  2. carries out at most one split or merge per table through
//     Database::SplitTablet / MergeTablets (online: reads, writes and paging
//     cursors go on), recording the policy's reason in system.tablet_events;
//  3. keeps the hot tablets it declines to split ("holds") with their
//     condition, recording each once as a "hold" event;
//  4. measures the partitions the large-partition tracker queued;
//  5. raises the bucket count of a `buckets = 'auto'` table under a tail
//     hotspot (Database::ChangeBucketCount): a tablet it holds as an
//     append_tail, or an append-only tail it splits by size (a load that
//     outgrows tablets fast is split by size before its heat is sustained
//     long enough for a hold, and the split alone would only move the hot
//     spot to the new last tablet): to
//     kFirstAutoBuckets, then doubling, at most once per kBucketRaiseGapMicros
//     per table, so that a hot spot that outlasts a raise gets another and the
//     count does not run away within one burst;
//  6. raises the partition-bucket count of a hot or large partition of a
//     `partition_buckets = 'auto'` table (Database::ChangePartitionBuckets):
//     the heaviest sampled partition of a tablet it holds as single_partition
//     or skewed_partition, or a partition the large-partition tracker measured
//     above the guardrail's warn threshold: to kFirstAutoPartitionBuckets, then
//     doubling, at most once per kBucketRaiseGapMicros per partition. Its new
//     sub-partitions are separate partition positions, so the ordinary load
//     and size splits then spread the partition over tablets.
// On a cluster node, a replicated table's splits and merges are decided by
// the cluster's balancer leader: with ResizeProposals attached, step 2 hands
// them over as proposals (tablets/resize_proposals.h) instead, every round,
// and the leader's decision reaches this node's map through the placement.
// Tablet sizes: RocksDB's estimate is good for flushed data but its memtable
// part can be far off either way for small ranges, so whenever a tablet may
// be above the split threshold — by the estimate, or by its flushed or last
// counted bytes plus what was written to it since — the balancer counts its
// bytes (Database::MeasureTabletBytes, stopping past the threshold), and
// counts again only after another tenth of the threshold was written. The
// halves of a median split start from half the counted bytes.
//
// Thread safety: RunOnce may be called from any thread (tests call it with
// the thread off); Holds is thread-safe. Stop joins the thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tablets/balancer_policy.h"
#include "tablets/resize_proposals.h"

namespace tessera {

class Database;

// A hot tablet the balancer leaves alone, and why.
struct TabletHold {
  uint32_t table_id = 0;
  TabletId tablet = 0;
  std::string condition;  // single_partition, skewed_partition, append_tail
  std::string reason;
  int64_t since_micros = 0;
};

class TabletBalancer {
 public:
  static constexpr uint32_t kFirstAutoBuckets = 16;
  static constexpr int64_t kBucketRaiseGapMicros = 30'000'000;
  static constexpr uint32_t kFirstAutoPartitionBuckets = 16;

  // REQUIRES: db outlives the balancer.
  TabletBalancer(Database* db, BalancerOptions options);
  ~TabletBalancer();

  void Start();  // starts the thread; no-op when running
  void Stop();   // wakes and joins the thread
  // One round over every table, now.
  void RunOnce();
  std::vector<TabletHold> Holds() const;
  // Where splits and merges of tables decided elsewhere go (nullptr: none,
  // every table's are carried out here). REQUIRES: `proposals` outlives its
  // attachment; detach (nullptr) only once the balancer is stopped.
  void AttachResizeProposals(ResizeProposals* proposals) { proposals_.store(proposals); }
  const BalancerOptions& options() const { return options_; }

 private:
  void Loop();
  void RunTable(uint32_t table_id);
  // Replaces size estimates above the split threshold by counted sizes, and
  // those of old enough tablets above an eighth of the merge limit by sizes
  // counted up to the merge limit (they decide merges).
  void VerifySizes(const TableSchema& table, TableLoad* load);
  // The size of a tablet whose estimate is between an eighth of the merge
  // limit and the split threshold: counted (at most the merge limit bytes),
  // or the last count plus what was written since.
  uint64_t VerifiedSmallSize(const TableSchema& table, const TabletLoad& t);
  uint64_t MergeLimit() const;  // bytes: merge_fraction of split_size_bytes
  void MeasureLargePartitions();
  // Both return whether the count was raised.
  bool RaiseBuckets(const TableSchema& table, const std::string& reason, int64_t now);
  bool RaiseBucketsForGrowingTail(const TableSchema& table, const TableLoad& load, const BalancerDecision& split,
                                  int64_t now);
  // `position`: a sub-partition's position (a sampled key) or a logical one.
  void RaisePartitionBuckets(const TableSchema& table, const std::string& position, const std::string& reason,
                             int64_t now);
  // The raise for a hot tablet held as single_partition or skewed_partition.
  void RaiseHotPartition(const TableSchema& table, const TableLoad& load, const BalancerDecision& hold, int64_t now);

  Database* db_;
  const BalancerOptions options_;
  std::atomic<ResizeProposals*> proposals_{nullptr};
  std::mutex round_mu_;  // one round at a time
  std::map<uint32_t, HotSince> hot_since_;
  std::map<uint32_t, int64_t> last_bucket_raise_;  // table id -> when its bucket count was last raised
  // (table id, logical position) -> when the partition's partition-bucket count was last raised
  std::map<std::pair<uint32_t, std::string>, int64_t> last_partition_raise_;
  std::set<std::pair<uint32_t, TabletId>> unsplittable_;  // size splits that found a single partition
  std::set<std::pair<uint32_t, TabletId>> unmergeable_;   // merges refused (left tablet id)
  struct Counted {
    uint64_t bytes = 0;          // counted size
    uint64_t bytes_written = 0;  // the tablet's write counter when counted
  };
  std::map<std::pair<uint32_t, TabletId>, Counted> counted_;
  std::map<std::pair<uint32_t, TabletId>, Counted> counted_small_;  // counts capped at the merge limit
  mutable std::mutex holds_mu_;
  std::map<std::pair<uint32_t, TabletId>, TabletHold> holds_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera
