// The tablet balancer's policy: given one table's tablets as plain values
// (bounds, age, size, load over the sliding window, a sample of accessed
// keys), decide which tablet to split, which neighbours to merge, and which
// hot tablets to leave alone and why. No I/O and no threads: the database's
// TabletBalancer (db/tablet_balancer.h) gathers the inputs, keeps the state
// between rounds (HotSince) and carries the decisions out.
//
// Rules (thresholds in BalancerOptions):
//  - size split: a tablet above split_size_bytes is split at its median
//    partition;
//  - load split: a tablet whose load (rows read + written per second, or
//    bytes per second) has stayed above the threshold for
//    split_sustain_micros is split at the key that balances the sampled load
//    (weighted median of KeySample), at a partition boundary;
//  - no split when it cannot spread the load: all sampled load on one
//    partition ("single_partition"), one partition carrying more than
//    max_side_share ("skewed_partition"), or writes that only ever go past
//    the tablet's last key ("append_tail": a split would just move the hot
//    spot to the new last tablet);
//  - merge: two neighbours, each older than merge_min_age_micros, whose
//    combined load and size are below merge_fraction of the split
//    thresholds, while the table keeps at least its initial tablet count.
// Hysteresis: a split needs load sustained above the threshold; a merge needs
// the pair far below it (merge_fraction) and old enough, so a tablet that was
// just split is not merged back while the load lasts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tablets/key_sample.h"
#include "tablets/tablet_map.h"

namespace tessera {

struct BalancerOptions {
  bool enabled = false;                            // the server turns it on
  int64_t interval_micros = 1'000'000;             // one round per table per interval
  // 256 MiB: large enough that per-tablet overhead (metadata, an iterator
  // per scan segment) is noise; small enough to move a tablet to another
  // node in about two seconds at 1 Gbit/s.
  uint64_t split_size_bytes = 256ull << 20;
  // 2,500 rows/s: CockroachDB's load-split default (kv.range_split.load_qps_threshold);
  // on a 2-core node that is about a tenth of what one node serves.
  double split_rows_per_second = 2500;
  double split_bytes_per_second = 32ull << 20;     // 32 MiB/s
  int64_t split_sustain_micros = 10'000'000;       // one LoadWindow
  double merge_fraction = 0.25;                    // of the split thresholds, for the pair combined
  int64_t merge_min_age_micros = 60'000'000;
  size_t max_tablets_per_table = 1024;
  double max_side_share = 0.8;                     // a cut leaving more on one side does not help
  double append_share = 0.9;                       // advancing or repeating writes: an append-only tail
  double min_advance_share = 0.01;                 // ... of which this many advance (else: one partition at a time)
  uint64_t min_sampled_writes = 20;                // before judging a tail
};

// One tablet as the policy sees it.
struct TabletLoad {
  TabletId id = 0;
  std::string start, end;
  int64_t age_micros = 0;
  uint64_t size_bytes = 0;       // estimate (the balancer verifies it before a size split)
  uint64_t flushed_bytes = 0;    // the flushed part of the estimate (SST files only)
  uint64_t bytes_written = 0;    // since the tablet was created, through this node or into its copy
  double rows_per_second = 0;    // reads + writes
  double writes_per_second = 0;
  double bytes_per_second = 0;   // read + written
  KeySample::Snapshot sample;
};

struct TableLoad {
  uint32_t table_id = 0;
  bool hash = false;           // hash tables cut at token boundaries ...
  bool sub_partitions = false; // ... unless partition-bucketed: cuts at whole sub-partition positions
  size_t min_tablets = 1;      // the table's initial tablet count
  std::vector<TabletLoad> tablets;  // sorted by start, covering the table
};

struct BalancerDecision {
  enum class Kind { kSplit, kMerge, kHold };
  Kind kind = Kind::kHold;
  TabletId tablet = 0;                        // split: the tablet; merge: the left one; hold: the hot one
  std::optional<std::string> split_position;  // a load split's cut; absent for a size split (median)
  std::string condition;                      // hold: single_partition, skewed_partition, append_tail
  std::string reason;                         // for system.tablet_events and the log
};

// When each tablet's load went above the split threshold (absent: not hot).
using HotSince = std::map<TabletId, int64_t>;

// One round for one table: at most one split or merge, plus a hold for every
// hot tablet that splitting would not help. Updates `hot_since`.
std::vector<BalancerDecision> PlanTable(const TableLoad& table, const BalancerOptions& options, int64_t now_micros,
                                        HotSince* hot_since);

// Where a load split of `tablet` (one of `table`'s) would cut: at the sampled
// partition boundary that leaves closest to `share` (0 to 0.5; 0.5, as
// PlanTable's load splits: in halves) of its sampled load on one side, either
// side; `*left_share` (when given) is the share left of the cut. nullopt when
// splitting cannot spread its load, with the reason in *refusal: a hold
// condition (append_tail, single_partition, skewed_partition: judged by the
// even cut, whatever `share`) or too few sampled partitions. For a caller
// that decided by other numbers than the split thresholds that the tablet is
// too hot (the cluster's placement balancer, cluster/placement_balancer.h,
// which cuts off the piece that fills the least busy node up to the mean).
std::optional<std::string> LoadSplitPosition(const TableLoad& table, const TabletLoad& tablet,
                                             const BalancerOptions& options, std::string* refusal,
                                             double share = 0.5, double* left_share = nullptr);

// Whether the load of a tablet is above the split threshold.
bool IsHot(const TabletLoad& tablet, const BalancerOptions& options);

// The share of sampled writes that advanced the tail or landed near it
// (KeySample::Snapshot::near_tail; 0 when nothing was written).
double TailShare(const KeySample::Snapshot& sample);
// Whether the tablet's writes form an append-only tail: enough sampled
// writes, at least two distinct partitions, TailShare >= append_share, and
// at least min_advance_share of the writes advancing the tail (a load that
// fills one partition at a time repeats, and is a hot partition instead).
bool IsAppendTail(const TabletLoad& tablet, const BalancerOptions& options);

}  // namespace tessera
