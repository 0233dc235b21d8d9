// TabletMapSync: applies the cluster's tablet placements
// (cluster/tablet_placement.h) to this node's tablet maps. At Start it reads
// every placement under /tessera/tablets/ and splits local tablets at every
// placement boundary they lack (a node that was down while others split);
// then it watches the prefix and does the same for each change, so that a
// split one node recorded in etcd reaches every node. Local splits go
// through Database::SplitTablet, whose BeforeSplit finds the boundary
// already recorded.
//
// Correctness does not wait for it: a split keeps the replicas, so a node
// whose tablet spans several placement tablets routes to the same replicas
// (ReplicatedTablet::Replicas); the sync keeps tablet boundaries, and so
// load statistics and the balancer's view, the same on every node.
//
// Thread safety: Start and Stop from one thread; Stop joins the watch.
#pragma once

#include <memory>
#include <string>

#include "cluster/etcd_client.h"
#include "cluster/tablet_placement.h"

namespace tessera {
class Database;
}

namespace tessera::cluster {

class TabletMapSync {
 public:
  // REQUIRES: db, etcd and placements outlive the sync.
  TabletMapSync(Database* db, EtcdClient* etcd, std::string etcd_endpoint, TabletPlacements* placements);
  ~TabletMapSync();  // Stop()

  // Applies every placement, then watches. Errors: IOError (etcd).
  Status Start();
  void Stop();
  // Splits `table_uuid`'s local tablets at the boundaries of the placement
  // `text`. Returns how many splits it made.
  int Apply(const std::string& table_uuid, const std::string& text);

 private:
  Database* db_;
  EtcdClient* etcd_;
  std::string endpoint_;
  TabletPlacements* placements_;
  std::unique_ptr<EtcdWatch> watch_;
};

}  // namespace tessera::cluster
