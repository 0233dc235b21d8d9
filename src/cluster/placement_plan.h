// PlanPlacement: what the placement balancer (cluster/placement_balancer.h)
// does next in one data center, decided from plain values — the nodes with
// their replica counts and served load, the tablets with their replicas and
// load — with no I/O, so that every rule is tested on its own
// (tests/cluster/placement_plan_test.cc). The balancer gathers the values
// from etcd (placements, load reports) and carries the decision out.
//
// Load is requests per second a replica serves (reads + writes, each node's
// TabletCounters::CountReplicaRequest over the last 10 s). A tablet's load
// per replica is what all nodes report serving for it divided by its
// replica count; a node's load is the sum over the replicas it holds.
//
// Bytes are what one replica of a tablet stores (the largest any replica
// reports); a node's bytes are the sum over the replicas it holds.
//
// Rules, in order (ScyllaDB balances counts only and assumes every tablet
// equally hot, scylladb#16824; the load rules go beyond it):
//  1. Count: when the fullest node holds at least 2 replicas more than the
//     emptiest and more than max_over_mean x the mean, move one replica from
//     it (among equally full: the busiest) to the emptiest (among equally
//     empty: the least busy), of a tablet the emptiest does not hold: the one
//     that leaves the two nodes closest in load and in bytes (each relative
//     to its mean, bytes once the largest node is min_bytes / 2 above it; a
//     cold, small one when the emptiest is the busier and the larger). Moves
//     within min_load_gain of the two nodes' current peak of the best count
//     as equal, and of equals the coldest, then the smallest, moves: a gain
//     that small is not worth moving load.
//  2. Bytes (only with current reports): when the largest node stores more
//     than bytes_max_over_mean x the mean and at least min_bytes above it,
//     move the replica that lowers the larger of the two nodes' bytes the
//     most, by at least min_load_gain of the largest's bytes, to the node
//     where that works best, unless the target would then serve more than
//     rule 3 allows, or rule 1's next move would bring this replica back.
//     With equal counts a bytes move leaves the two nodes 2 apart, and rule
//     1 then moves a small replica the other way: the two make a swap.
//  3. Load (only with current loads: reports measured after the last change
//     settled): when the busiest node serves more than load_max_over_mean x
//     the mean and at least min_load_per_second above it, move the replica
//     that lowers the higher of the two nodes' loads the most, by at least
//     min_load_gain of the busiest's load, to the node where that works best,
//     and never so that rule 1 would move a replica back or rule 2 would act
//     on the target (hysteresis: nothing oscillates between the rules).
//  4. Split: when no move helps and the busiest node's hottest tablet alone
//     carries more than its excess over the mean, split that tablet, cutting
//     off the load the least busy node lacks to the mean (at most the
//     excess, at most half; the pieces are then moved apart by rules 1 and
//     3). Halves alone can leave 4 equal pieces on 3 nodes 2/1/1 (1.5x the
//     mean), and take a split and a move more for each step down from there.
//  5. Otherwise a refusal, with its reason (the balancer records it).
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::cluster {

struct NodePlacementLoad {
  std::string host_id;  // 16 bytes
  std::string address;  // for reasons
  int tablets = 0;      // tablet replicas it holds
  double load = 0;      // requests/s it serves (filled in by PlanPlacement's caller or NodeLoads)
  uint64_t bytes = 0;   // bytes it stores (NodeLoads)
};

struct TabletPlacementLoad {
  std::string start;                  // the placement tablet's start (caller's identity for it)
  std::vector<std::string> replicas;  // host ids
  double load = 0;                    // requests/s one replica serves
  uint64_t bytes = 0;                 // bytes one replica stores
  // In transition (a move in flight, its `replicas` those it will have):
  // counted where it is going, never moved or split again meanwhile.
  bool moving = false;
};

struct PlacementPlanOptions {
  double max_over_mean = 1.1;        // rule 1: tablet replicas per node
  double load_max_over_mean = 1.25;  // rule 3: requests/s per node
  double min_load_per_second = 20;   // rule 3: a busiest node less above the mean is noise
  double min_load_gain = 0.05;       // rules 2 and 3: the least gain, a share of the largest's bytes or load
  double bytes_max_over_mean = 1.25; // rule 2: bytes per node
  uint64_t min_bytes = 64 << 20;     // rule 2: a largest node less above the mean is left alone
};

struct PlacementDecision {
  enum class Kind { kNone, kMove, kSplit, kRefusal };
  Kind kind = Kind::kNone;
  size_t tablet = 0;      // kMove, kSplit, kRefusal: index into the tablets given
  std::string from, to;   // kMove: host ids; kSplit, kRefusal: `from` is the busiest node
  std::string reason;     // for system.tablet_events and the log
  // kSplit: the share (0.1 to 0.5) of the tablet's load to cut off on one
  // side: the piece that brings the least busy node up to the mean, or the
  // busiest down to it, whichever is less (0.5: halves).
  double split_share = 0.5;
};

// Fills each node's `load` and `bytes` from the tablets' (sums over its replicas).
void NodeLoads(const std::vector<TabletPlacementLoad>& tablets, std::vector<NodePlacementLoad>* nodes);

// REQUIRES: every node is a live node of data center `dc`, and each tablet's
// replicas in `dc` are among them; loads are filled in (NodeLoads).
// `loads_current`: false while load reports may predate the last change
// (rules 2-5 then wait).
PlacementDecision PlanPlacement(const std::string& dc, const std::vector<NodePlacementLoad>& nodes,
                                const std::vector<TabletPlacementLoad>& tablets, const PlacementPlanOptions& options,
                                bool loads_current);

}  // namespace tessera::cluster
