// The tablet placements stored in etcd (cluster/tablet_placement.h) of the
// tables this node's catalog has: what the balancer, the node lifecycle,
// replication factor changes, the migration resumer and `tessera admin`
// read before they plan.
//
// Thread safety: thread-safe (reads etcd and the catalog).
#pragma once

#include <memory>
#include <vector>

#include "cluster/tablet_placement.h"
#include "common/status.h"

namespace tessera {
class TableSchema;
}

namespace tessera::cluster {

struct ReplicationServices;

struct PlacedTable {
  std::shared_ptr<const TableSchema> table;
  std::vector<TabletReplicas> placement;  // in key order
};

// One etcd range read over /tessera/tablets/: every placement of a table
// the catalog has, in table uuid order (a dropped table's placement, which
// stays until its key is deleted, is left out). Errors: IOError (etcd),
// Corruption (a placement that does not decode).
Result<std::vector<PlacedTable>> ReadPlacedTables(const ReplicationServices& services);

}  // namespace tessera::cluster
