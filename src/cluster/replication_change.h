// Replication factor changes: after ALTER KEYSPACE ... WITH replication,
// every placed tablet of the keyspace's tables gets one replica added or
// dropped per data center whose factor changed, each through the migration
// stages with one side empty (cluster/tablet_transition.h), as ScyllaDB
// rebuilds tablets on an RF change (its ALTER KEYSPACE answers once they
// are, and takes a factor that changes by at most 1 per data center, so
// that the old and the new quorums overlap; the executor checks that).
//
// Who drives it: the node that ran the ALTER KEYSPACE, before it answers
// the client (ReplicationChangeCoordinator, the executor's
// cql::ReplicationChanger); and, when that node died on the way, the
// placement balancer's leader, which brings any tablet whose replica count
// differs from its keyspace's factors back to them one per round
// (ChangeReplication with an empty keyspace and max_changes 1). A table
// with no placement yet is placed at the new factors when first used.
//
// Which node: an added replica goes to the live node of the data center
// that holds none of the tablet's replicas, on a rack the tablet has no
// replica on if there is one, and among those the fewest tablet replicas
// (counted over every placement, updated as changes are planned). A
// dropped replica is, in order: one on a node that is down or no longer a
// member, one on a rack that holds two, one on the node with the most
// tablet replicas. SimpleStrategy ignores data centers (every node is one
// group), as PlaceReplicas does.
//
// Thread safety: PlanReplicaCounts is pure; ChangeReplication runs on the
// caller's thread for as long as the moves take (one tablet at a time: 4
// at once measured slower on 2 cores), and may run on several
// nodes at once (each tablet's moves are fenced in etcd: the loser retries
// on a fresh plan).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/placed_tables.h"
#include "cluster/replication_strategy.h"
#include "cluster/tablet_migration.h"
#include "cluster/tablet_placement.h"
#include "common/status.h"
#include "cql/executor/replication_changer.h"

namespace tessera::cluster {

struct ReplicationServices;

struct ReplicaCountNode {
  std::string host_id;  // 16 bytes
  std::string data_center, rack;
  bool alive = false;
  int tablets = 0;  // tablet replicas it holds (PlanReplicaCounts adds its plan's)
};

struct ReplicaCountChange {
  size_t tablet = 0;     // index into the tablets given
  std::string add;       // host id of the node that gets a replica, or ""
  std::string drop;      // host id of the node whose replica goes, or ""
  std::string group;     // the data center ("" under SimpleStrategy)
};

// One change per tablet not in transition whose replica count in some data
// center differs from what `factors` asks (the first such data center in
// name order): exactly one of add and drop is set. A tablet that needs a
// replica no live node can take is listed in `problems` (text) instead.
std::vector<ReplicaCountChange> PlanReplicaCounts(const ReplicationFactors& factors,
                                                  const std::vector<TabletReplicas>& tablets,
                                                  std::vector<ReplicaCountNode>* nodes,
                                                  std::vector<std::string>* problems);

struct ReplicationChangeOptions {
  MigrationOptions migration;
  // Stop after this many changes (0: when every tablet has its factors).
  int max_changes = 0;
  // Give up this long after starting (tablets of another driver in
  // transition are waited for, a refused move re-planned).
  int64_t deadline_micros = 600'000'000;
  // Rounds in a row in which no change completed before giving up.
  int max_rounds_without_progress = 5;
  std::string reason = "replication factor change";
  // Set: no further change starts (the one running ends first).
  const std::atomic<bool>* stop = nullptr;
};

struct ReplicationChangeReport {
  int added = 0, dropped = 0, failed = 0;
  int remaining = 0;      // tablets still not at their factors when it stopped
  bool complete = false;  // every placed tablet of the keyspace(s) has its factors
  std::vector<std::string> errors;  // per failed change, and unplaceable tablets
  int64_t micros = 0;
};

// Brings every placed tablet of `keyspace`'s tables (empty: of every
// keyspace) to its keyspace's replication factors. Errors: NotFound
// (unknown keyspace), InvalidArgument (replication options that do not
// parse), IOError (etcd). A change that fails is in the report (ok status).
Result<ReplicationChangeReport> ChangeReplication(ReplicationServices* services, const std::string& keyspace,
                                                  const ReplicationChangeOptions& options = {});

// Whether some placed tablet of `tables` (every placement, as
// ReadPlacedTables gives them) could be brought closer to its keyspace's
// factors now: the placement balancer's check before it calls
// ChangeReplication, with no etcd read of its own. Errors: those of
// ChangeReplication's planning (unknown keyspace, unparsable options).
Result<bool> ReplicationDiffers(ReplicationServices* services, const std::vector<PlacedTable>& tables);

std::string ReplicationChangeReportJson(const ReplicationChangeReport& report);

// The executor's hook (cql/executor/replication_changer.h) on a node.
// REQUIRES: services outlive it.
class ReplicationChangeCoordinator : public cql::ReplicationChanger {
 public:
  ReplicationChangeCoordinator(ReplicationServices* services, ReplicationChangeOptions options)
      : services_(services), options_(std::move(options)) {
    options_.stop = &stopping_;
  }
  Status ApplyReplication(const std::string& keyspace) override;
  // The node is stopping: a statement still at work starts no further change
  // and answers with what is left (the balancer completes it).
  void Stop() { stopping_ = true; }

 private:
  ReplicationServices* const services_;
  std::atomic<bool> stopping_{false};
  ReplicationChangeOptions options_;
};

}  // namespace tessera::cluster
