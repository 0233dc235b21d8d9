// TabletMapSync: applies the cluster's tablet placements
// (cluster/tablet_placement.h) to this node's tablet maps. At Start it reads
// every placement under /tessera/tablets/ and brings the local tablets to
// its boundaries (a node that was down while others split or merged); then
// it watches the prefix and does the same for each change, so that a split
// or merge one node recorded in etcd reaches every node. Local changes go
// through Database::SplitTablet / MergeTablets with origin kPlacement
// (ClusterReplicaResolver, cluster/replicated_tablet.h): checked against the
// newest cached placement, never recorded again.
//
// Routing depends on it only across a move: splits and merges keep the
// replicas, so a node whose tablet spans several placement tablets, or lies
// within one, routes to the same replicas (ReplicatedTablet routes by the
// placement tablet holding its start) until one of those pieces moves. A
// move waits for every live node's acknowledgement (below), which a node
// gives only once its tablets have every boundary of the placement. Beyond
// that the sync keeps tablet boundaries, and so load statistics and the
// balancer's view, the same on every node.
//
// Migration barrier: after applying the placements of a watch event (or all
// of them at Start), and only when every boundary they record is a boundary
// of this node's tablets too, the sync drains the node's request fence (reads and
// writes routed by an older placement finish) and then puts
//   /tessera/placement_acks/<host id text> = the newest mod_revision applied
// (decimal; FROZEN), which the migration driver (cluster/tablet_migration.h)
// waits for on every live node before it moves a tablet to the next stage.
//
// Copies not held: at Start, before its first acknowledgement, the node
// deletes what it stores of tablets it holds no replica of and is not
// receiving (a move reverted while this node, its target, was down).
//
// Tombstones held: with each placement it applies, the sync holds the
// ranges of the table's tablets in transition from tombstone purging on
// this node (TableRegistry::SetPurgeHolds, owner kMigrationPurgeHold), and
// releases them once the placement shows the move ended.
//
// Thread safety: Start and Stop from one thread; Stop joins the watch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/etcd_client.h"
#include "cluster/placement_fence.h"
#include "cluster/tablet_placement.h"

namespace tessera {
class Database;
class TableSchema;
}

namespace tessera::cluster {

// The purge-hold owner for tablets in transition (TableRegistry::SetPurgeHolds).
inline constexpr char kMigrationPurgeHold[] = "migration";

inline constexpr char kPlacementAcksPrefix[] = "/tessera/placement_acks/";

class TabletMapSync {
 public:
  // REQUIRES: db, etcd, placements and fence outlive the sync.
  // self_host_id: 16 bytes.
  TabletMapSync(Database* db, EtcdClient* etcd, EtcdEndpoint etcd_endpoint, TabletPlacements* placements,
                PlacementFence* fence, std::string self_host_id);
  ~TabletMapSync();  // Stop()

  // Applies every placement, then watches. Errors: IOError (etcd).
  Status Start();
  void Stop();
  // Brings `table_uuid`'s local tablets to the boundaries of its placement
  // (`text` at etcd revision `revision`, or a newer one this node holds):
  // splits at boundaries it lacks, merges at boundaries the placement no
  // longer has. These local changes are checked against the placement, not
  // recorded in etcd again (TabletChangeOrigin::kPlacement). A change that
  // loses a race with this node's own balancer (NotFound) is tried again on
  // the tablets as they are then, up to 64 times. Returns whether every
  // tablet start of the newest placement this node holds is now the start
  // of one of its tablets (true for a table it does not know yet).
  bool Apply(const std::string& table_uuid, const std::string& text, int64_t revision);

 private:
  // Drains the request fence, then acknowledges `revision` in etcd.
  void Acknowledge(int64_t revision);
  // At Start: deletes local data of tablets this node is neither a replica
  // nor a pending replica of (a reverted move's partial copy).
  void DropCopiesNotHeld();
  void HoldTombstonesOfMovingTablets(const TableSchema& table, const std::vector<TabletReplicas>& placement);

  Database* db_;
  EtcdClient* etcd_;
  EtcdEndpoint endpoint_;
  TabletPlacements* placements_;
  PlacementFence* fence_;
  std::string self_host_id_;
  std::unique_ptr<EtcdWatch> watch_;
};

}  // namespace tessera::cluster
