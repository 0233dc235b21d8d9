// PlacementBalancer: one node at a time moves tablet replicas between the
// live nodes of a data center until each holds about as many, stores about
// as many bytes and serves about as many requests per second, splitting a
// tablet too hot for any one node (issue 11's balancer; ScyllaDB's balances
// tablet counts only). The
// rules are PlanPlacement's (cluster/placement_plan.h); this class gathers
// their inputs and carries their decisions out.
//
// Leadership: the node holding /tessera/balancer/leader (value: its host id
// text; FROZEN) plans. The key is created only if absent, bound to a lease
// of the balancer's own (lease_seconds), renewed every round; when the
// leader dies its lease expires and another node's next round takes over.
// A deposed leader writes nothing: every placement write of its moves also
// compares the leader key's create_revision with the one it created
// (MigrationOptions::fence_key), so once the key expired or another node
// holds it the move stops, and the migration resumer finishes it; its
// splits and merges carry that revision as their leader term
// (TabletChangeSource, BalancerLeaderFence) and are refused likewise.
//
// A round (every interval, leader only): one replica added or dropped of a
// tablet whose replica count differs from its keyspace's factors (an ALTER
// KEYSPACE whose node died on the way, cluster/replication_change.h), when
// no tablet is in transition; else, per data center, decisions of
// PlanPlacement over the placement as it will be once the moves in flight
// end (their tablets never chosen again meanwhile): each move started on a
// thread of its own as long as neither of its nodes takes part in
// max_moves_per_node moves already, until a decision is not a move (a split
// or a refusal waits for a round with nothing in transition) or a node is
// at its limit. So a joining node receives up to max_moves_per_node moves
// at once; the bytes and load rules still wait for reports from after the
// last change, so they act one move at a time. The decisions are the
// first ones of PlanPlacement (cluster/placement_plan.h) over the live
// nodes: a move by tablet count, by bytes or by served load, a split of a
// tablet too hot to place anywhere, or a refusal. Loads and tablet sizes
// come from every node's report (cluster/node_load.h); the bytes and load
// rules wait until every node has
// reported load_settle_micros after the last change, so that no decision
// rests on rates from before it. A move goes through MoveTabletReplica,
// which records it and its reason in system.tablet_events on the leader
// (kind "migration"); a split through Database::SplitTablet (kind "split",
// cut where the key samples put the piece's share of the load: this node's
// own sample of the requests it coordinated, joined by those the other
// nodes last reported (NodeLoad's "sample"), since with token-aware drivers
// the leader coordinates few of the tablet's requests; at the median
// partition when they sampled too few keys); a refusal is recorded (kind
// "refusal") at most once per refusal_interval_micros per data center.
//
// Splits and merges of replicated tablets (issue 28, item 4): the leader
// also decides them, every resize_interval on a task of its own, from the
// proposals of every live node's tablet balancer (cluster/tablet_resize.h:
// DecideResizes picks at most one change per placement tablet) and carries
// each out through Database::SplitTablet / MergeTablets, so through the
// placement in etcd; the reason recorded (kind "split" or "merge") names the
// proposing node. A change refused (a tablet holding one partition) is
// not tried again for refused_resize_micros, one that failed otherwise (the
// median's read timed out) for failed_resize_micros; a stale map or a move
// begun meanwhile is tried again at the next round. This runs with
// moves switched off too (`--no-placement-balancer`): a cluster's tablets
// split and merge whether or not replicas move.
//
// Stop is explicit (the destructor calls it): it wakes the threads, lets the
// moves in flight finish, revokes the lease.
//
// Thread safety: Start/Stop from one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/node_load.h"
#include "cluster/placed_tables.h"
#include "cluster/placement_plan.h"
#include "cluster/tablet_placement.h"
#include "cluster/tablet_migration.h"
#include "cluster/tablet_resize.h"
#include "common/periodic_task.h"

namespace tessera {
class TableSchema;
}

namespace tessera::cluster {

struct ReplicationServices;

// One placement tablet of a table, as a round sees it.
struct PlacedTablet {
  std::shared_ptr<const TableSchema> table;
  TabletReplicas tablet;
};

struct PlacementBalancerOptions {
  int64_t interval_micros = 5'000'000;
  int lease_seconds = 10;
  PlacementPlanOptions plan;
  // Wall-clock time every node's load report must postdate the last move or
  // split by before the load rules act on them (a tablet split less than 3 s
  // ago shows under 90 % of its rate: its window counts whole seconds);
  // until then, pieces of a tablet this leader split are taken to carry the
  // shares of its load its cut put on each side (AssumeSplitLoads).
  int64_t load_settle_micros = 3'000'000;
  int64_t refusal_interval_micros = 30'000'000;
  // Moves run on threads of their own, several at once: a node is the
  // source or the target of at most this many in flight (ScyllaDB likewise
  // bounds the streams per shard), counting moves it did not start (a
  // manual move, a resumed one, a replication factor change).
  int max_moves_per_node = 2;
  // The most moves one round starts.
  int max_moves_per_round = 8;
  MigrationOptions migration;
  bool moves = true;  // false: the leader only decides splits and merges
  int64_t resize_interval_micros = 1'000'000;
  int64_t refused_resize_micros = 30'000'000;  // a change refused (InvalidArgument)
  int64_t failed_resize_micros = 2'000'000;    // a change that failed otherwise (a read timed out)
};

class PlacementBalancer {
 public:
  // REQUIRES: services outlive the balancer (Stop before they go).
  PlacementBalancer(ReplicationServices* services, PlacementBalancerOptions options);
  ~PlacementBalancer();  // Stop()
  void Start();
  void Stop();

  // One round now, on the caller's thread (tests): true when it started a
  // move, split a tablet or changed a replica count. Leads first if no one
  // does.
  bool RunOnce();
  // One round of split and merge decisions now: true when it changed a
  // placement. Leads first if no one does.
  bool ResizeOnce();

 private:
  bool Lead();
  bool Round();
  bool Resize();
  static std::string RefusalKey(const PlacementResizeProposal& p);
  // Carries out one decided proposal through this node's map. NotFound:
  // the map is behind the placement (or the tablet changed meanwhile), try
  // again; other errors: the change was refused (Database::SplitTablet's).
  [[nodiscard]] Status CarryOut(const std::shared_ptr<const TableSchema>& table, const PlacementResizeProposal& decided);
  // Rule 0 (cluster/replication_change.h): true when it added or dropped a replica.
  // `tables`: the round's placements (the balancer's etcd read only
  // repeats when there is something to change).
  bool CompleteReplication(const std::vector<PlacedTable>& tables);
  // Runs on a thread of its own (StartMove); true when the move completed.
  bool Move(const std::shared_ptr<const TableSchema>& table, const std::string& start, const PlacementDecision& d,
            int64_t leader_revision);
  void StartMove(const std::shared_ptr<const TableSchema>& table, const std::string& start, const PlacementDecision& d);
  // Collects the moves that ended; `wait`: all of them, once they end.
  void ReapMoves(bool wait);
  // `share`: PlacementDecision::split_share; `reports`: the round's load
  // reports, whose key samples join this node's. On success, the cut is in
  // `*split` (its `cut` and `left_share`).
  struct RecentSplit;
  bool Split(const std::shared_ptr<const TableSchema>& table, const std::string& start, const std::string& reason,
             double share, const std::map<std::string, NodeLoad>& reports, RecentSplit* split);
  void RecordRefusal(const std::string& dc, const TableSchema& table, const std::string& reason, int64_t now);
  void AssumeSplitLoads(const std::vector<PlacedTablet>& placed, std::vector<TabletPlacementLoad>* tablets) const;

  // A tablet this leader split since the loads last settled, and its load per replica then.
  struct RecentSplit {
    std::string table_uuid;  // text form
    std::string start, end;  // table-relative; empty end: the table's end
    double load = 0;
    std::string cut;         // table-relative; empty: not known (each piece half the load)
    double left_share = 0.5; // of `load`, the pieces before `cut`
  };

  ReplicationServices* const services_;
  const PlacementBalancerOptions options_;
  std::mutex lead_mu_;  // Lead() runs on both tasks' threads
  int64_t lease_ = 0;  // guarded by lead_mu_
  std::atomic<int64_t> leader_revision_{0};  // the leader key's create_revision while this node leads
  std::atomic<int64_t> last_change_micros_{0};  // wall clock: when the last move, split or merge ended
  // Resize task only: decided changes that failed (RefusalKey), and until when they wait.
  std::map<std::string, int64_t> refused_resizes_;
  std::map<std::string, int64_t> last_refusal_micros_;  // data center -> when a refusal was last recorded
  std::vector<RecentSplit> recent_splits_;
  // This leader's moves (balancer thread; Stop after the task): counted and
  // kept from being chosen again even before their first stage is in etcd.
  struct MoveInFlight {
    std::string table_uuid;  // 16 bytes
    std::string start, from, to;
    std::future<bool> completed;
  };
  std::vector<MoveInFlight> moves_in_flight_;
  PeriodicTask task_;
  PeriodicTask resize_task_;
};

}  // namespace tessera::cluster
