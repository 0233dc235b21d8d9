// Completes or reverts tablet migrations whose driver is gone, so that a
// kill -9 of the node driving a move (an admin command's node, the placement
// balancer's leader) never leaves a tablet half moved. Every interval it
// reads the placements in etcd and takes over (ResumeMigration,
// cluster/tablet_migration.h) each tablet in transition whose driver is
//   - this node, without the move in hand (the process restarted), or
//   - down to this node and without a lease (its process is gone, not just
//     cut off from this node) or no longer a member, and this node is the
//     live member with the lowest host id (one node acts; two
//     acting at once are still safe: the etcd transaction that makes one
//     the driver is fenced by the transition, so the other's is refused).
// Transitions without a driver (written before drivers were recorded) are
// left alone. As ScyllaDB's topology coordinator does on a new leader, it
// reverts a move before write_both_read_new and completes one after.
//
// Thread safety: Start and Stop from one thread; RunOnce from any, one at a
// time with the thread's rounds.
#pragma once

#include <cstdint>
#include <mutex>

#include "cluster/tablet_migration.h"
#include "common/periodic_task.h"

namespace tessera::cluster {

struct ReplicationServices;

struct MigrationResumerOptions {
  int64_t interval_micros = 1'000'000;
  MigrationOptions migration;
};

class MigrationResumer {
 public:
  // REQUIRES: services outlive the resumer (Stop before they go).
  MigrationResumer(ReplicationServices* services, MigrationResumerOptions options);
  ~MigrationResumer();  // Stop()
  void Start();
  // Wakes and joins the thread; a take-over in progress finishes first.
  void Stop();
  // One pass now: the number of migrations taken over.
  int RunOnce();

 private:
  ReplicationServices* const services_;
  const MigrationResumerOptions options_;
  std::mutex round_mu_;  // one pass at a time
  PeriodicTask task_;
};

}  // namespace tessera::cluster
