// Moves one replica of a tablet from one node to another, online, through
// the stages of cluster/tablet_transition.h (ScyllaDB's tablet migration):
// each stage is one etcd transaction on the table's placement, fenced by the
// key's mod_revision (TabletPlacements::ChangeTablet: a tablet whose
// transition is not the one this driver last wrote is left alone), followed
// by a barrier: every live member has acknowledged the new revision
// (/tessera/placement_acks/, cluster/tablet_map_sync.h), so it routes by
// the new stage and no read or write routed by the old one is in flight.
// The first stage is written only if the tablet still has the bounds and
// replicas the move was validated against (a split recorded meanwhile
// refuses the move, recorded as "migration refused"; nothing to revert).
//
//   allow_write_both_read_old -> write_both_read_old -> streaming
//     (the tablet's key range read from an old replica in windows of
//     window_keys keys, stored values and tombstones as they are, and
//     applied to the pending replica as merge operands: writes arriving
//     meanwhile reconcile with them; within the node's stream budget,
//     ReplicationServices::stream_limiter, shared by every move it drives;
//     the bytes and keys streamed are counted on /metrics and in the report)
//   -> write_both_read_new -> use_new -> cleanup (the leaving replica's
//     copy of the range deleted) -> replicas = old - leaving + pending.
//
// A failure before write_both_read_new reverts: the transition is removed
// (the replicas stay), and after a barrier the pending node's partial copy
// is deleted. From write_both_read_new on the move only goes forward; a
// failure there is returned with the tablet left at its stage, and its
// driver (named in the transition) or, once the driver is down, another
// node completes it (ResumeMigration, cluster/migration_resumer.h).
// After each stage's barrier the failpoint "migration.<stage>" is hit
// (common/failpoints.h): fault tests hold a move there; "migration.planned"
// is hit once validated, before the first stage is written.
//
// The caller's thread runs the whole move (seconds to minutes).
// The driving node records the outcome in system.tablet_events (kind
// "migration", "migration reverted" or "migration refused", the request's
// reason, from and to).
//
// Thread safety: one move per tablet at a time (the fencing transaction
// refuses a second); moves of different tablets may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/tablet_placement.h"
#include "common/status.h"

namespace tessera {
class TableSchema;
}

namespace tessera::cluster {

struct ReplicationServices;

struct MoveRequest {
  std::string keyspace, table;
  std::string start;      // the placement tablet's start, table-relative (bytes; "" for the first)
  // host ids (16 bytes). A replication factor change leaves one empty
  // (cluster/replication_change.h): no `from` adds a replica on `to`
  // (streamed from the tablet's replicas), no `to` drops `from`'s (streamed
  // to the other replicas first, then deleted at cleanup).
  std::string from, to;
  // Why, as system.tablet_events records it on the driving node.
  std::string reason = "manual (admin API)";
};

struct MigrationOptions {
  // Set by the placement balancer: every placement write of the move also
  // requires this key's create_revision to be `fence_create_revision` (its
  // leader key, as it created it), so a deposed leader writes nothing and
  // its move stops (a Busy "fenced" in the report; the resumer finishes it).
  std::string fence_key;
  int64_t fence_create_revision = 0;
  int64_t barrier_timeout_micros = 30'000'000;
  uint32_t window_keys = 512;
};

struct MoveReport {
  struct Stage {
    std::string name;
    int64_t revision = 0;      // the placement's etcd revision at that stage
    int64_t barrier_micros = 0;
  };
  std::vector<Stage> stages;
  uint64_t streamed_keys = 0, streamed_bytes = 0;
  uint64_t paxos_rows = 0;  // Paxos state rows carried to the new replica (or, on a drop, to the others)
  int64_t streaming_micros = 0;
  bool completed = false;  // false: reverted, or stopped at `stopped_at`
  std::string stopped_at;  // the stage a failure left the tablet at ("" when reverted or completed)
  std::string error;       // why it did not complete
};

// Errors (nothing changed): NotFound (unknown table, no tablet starting at
// `start`, `from` or `to` not a member), InvalidArgument (`from` not a
// replica, `to` already one, `to` down or in another data center, the
// tablet already in transition, neither node given, a drop of the tablet's
// only replica), IOError (etcd). Once the move started,
// problems are reported in MoveReport (ok status).
Result<MoveReport> MoveTabletReplica(ReplicationServices* services, const MoveRequest& request,
                                     const MigrationOptions& options = {});

// The same, as `tessera admin move` names things: the tablet's start as hex
// (as `tessera admin tablets` prints it), each node by host id text or
// address. Errors: also InvalidArgument for hex that is not, NotFound for
// a node no member is.
Result<MoveReport> MoveTabletReplica(ReplicationServices* services, const std::string& keyspace,
                                     const std::string& table, const std::string& start_hex, const std::string& from,
                                     const std::string& to, const MigrationOptions& options = {});

// Takes over the migration of `observed` (a placement tablet of `table` in
// transition, as read from etcd) whose driver is down or lost it (a
// restart): writes itself in as driver (fenced: refused with a Busy in the
// report if the transition changed meanwhile), then reverts a move before
// write_both_read_new and completes one from there on, as MoveTabletReplica
// would. Errors: InvalidArgument (no transition; this node drives it now).
Result<MoveReport> ResumeMigration(ReplicationServices* services, std::shared_ptr<const TableSchema> table,
                                   const TabletReplicas& observed, const MigrationOptions& options = {});

std::string MoveReportJson(const MoveReport& report);

}  // namespace tessera::cluster
