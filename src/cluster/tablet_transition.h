// A tablet replica on the move: the stage machine of a migration as plain
// values, kept on the placement tablet in etcd (cluster/tablet_placement.h)
// and read by every coordinator to route writes and reads. Follows
// ScyllaDB's tablet migration stages (docs/dev/topology-over-raft.md); the
// driver that advances them is cluster/tablet_migration.h, the plan
// docs/dev/tablet-migration.md.
//
//   stage                      writes go to         reads go to
//   allow_write_both_read_old  old                  old
//   write_both_read_old        old + pending        old
//   streaming                  old + pending        old
//   write_both_read_new        old + pending        new
//   use_new                    new                  new
//   cleanup                    new                  new   (the leaving node drops the range)
// where old = the tablet's replicas, new = old - leaving + pending. A
// pending replica written to adds one to the acknowledgements a write
// needs, as Cassandra counts pending endpoints.
//
// A replication factor change (ALTER KEYSPACE, cluster/replication_change.h)
// goes through the same stages with one side empty, as ScyllaDB's RF change
// rebuilds tablets: no leaving replica adds `pending` (new = old + pending;
// the consistency levels count the new replica from write_both_read_new
// on), no pending replica drops `leaving` (new = old - leaving; its data is
// streamed to the others first, so a write it alone acknowledged stays).
//
// Stage names are FROZEN in etcd (nodes of different releases read them).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::cluster {

enum class MigrationStage {
  kAllowWriteBothReadOld,
  kWriteBothReadOld,
  kStreaming,
  kWriteBothReadNew,
  kUseNew,
  kCleanup,
};

struct TabletTransition {
  MigrationStage stage = MigrationStage::kAllowWriteBothReadOld;
  std::string leaving;  // host id (16 bytes), one of the tablet's replicas; empty: a replica is added
  std::string pending;  // host id (16 bytes), not one of them; empty: a replica is dropped
  // host id (16 bytes) of the node advancing the stages; when it is down, or
  // restarted without the move in hand, another node takes the move over
  // (cluster/migration_resumer.h). Empty in placements written before it.
  std::string driver;
  bool operator==(const TabletTransition&) const = default;
};

// "allow_write_both_read_old", ... (FROZEN).
const char* MigrationStageName(MigrationStage stage);
// InvalidArgument for a name no stage has.
Result<MigrationStage> MigrationStageFromName(const std::string& name);
// The stage after `stage`; nullopt after cleanup (the migration ends).
std::optional<MigrationStage> NextMigrationStage(MigrationStage stage);

// The replicas a migrated tablet has once it ends: old - leaving + pending,
// in old's order with pending where leaving was (appended when nothing
// leaves; leaving removed when nothing is pending).
std::vector<std::string> NewReplicas(const std::vector<std::string>& old, const TabletTransition& t);

// Whom a coordinator writes to and reads from, for a tablet with replicas
// `old` and an optional transition. `natural` are the replicas the
// consistency level counts; `pending` (empty or one host) also gets every
// write and must acknowledge it.
struct WriteReplicaSet {
  std::vector<std::string> natural;
  std::vector<std::string> pending;
};
WriteReplicaSet WriteReplicas(const std::vector<std::string>& old, const std::optional<TabletTransition>& t);
std::vector<std::string> ReadReplicas(const std::vector<std::string>& old, const std::optional<TabletTransition>& t);

}  // namespace tessera::cluster
