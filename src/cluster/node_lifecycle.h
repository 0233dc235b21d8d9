// Decommission and removenode: every tablet replica a node holds moves to another node
// (cluster/tablet_migration.h), one at a time, then the node leaves the
// cluster: its record, load report and placement acknowledgement are
// deleted from etcd, so every member reports REMOVED_NODE (nodetool
// decommission). Its process keeps running as a coordinator holding no
// data until it is stopped, as a decommissioned Cassandra node does.
//
// Targets: for each tablet, the live node of the same data center that
// holds no replica of it and, among those, the fewest tablet replicas
// (counted over every placement, updated as moves are planned). Every
// tablet gets its target before the first move starts; when one cannot
// (fewer other live nodes in its data center than its replication factor)
// nothing moves: InvalidArgument, as Cassandra refuses a decommission that
// would leave too few replicas.
//
// Errors: NotFound (no member is `node`), InvalidArgument (above),
// IOError (etcd). A move that fails stops the decommission: the report
// says which, the node stays a member, and moves already done stay done.
//
// Thread safety: runs on the caller's thread for as long as the moves take.
#pragma once

#include <string>
#include <vector>

#include "cluster/tablet_migration.h"
#include "common/status.h"

namespace tessera::cluster {

struct ReplicationServices;

struct DecommissionReport {
  struct Move {
    std::string keyspace, table, start;  // start: hex, table-relative
    std::string to;                      // the target's address
    MoveReport report;
  };
  std::vector<Move> moves;
  bool left = false;  // every replica moved and the node's record deleted
  std::string error;
};

// node: host id text or address. Decommission takes a live node
// (InvalidArgument for a down one: removenode).
Result<DecommissionReport> DecommissionNode(ReplicationServices* services, const std::string& node,
                                            const MigrationOptions& options = {});

// nodetool removenode: the same for a node that is down (InvalidArgument
// for a live one), each replica rebuilt on its target from another live
// replica of its tablet; refused before any move when a tablet has no live
// replica but the dead node's (RF 1: its data cannot be rebuilt; Cassandra
// would drop it silently). The dead node's copies stay on its disk.
Result<DecommissionReport> RemoveNode(ReplicationServices* services, const std::string& node,
                                      const MigrationOptions& options = {});

std::string DecommissionReportJson(const DecommissionReport& report);

}  // namespace tessera::cluster
