// PaxosPruner: the background job that prunes a node's Paxos state
// (cluster/paxos_state.h, "Pruning": rows of dropped tables, and rows with
// nothing in progress older than max(3 hours, gc_grace_seconds)) through
// ReplicaService::PrunePaxosState, at start and every `interval` after.
//
// Thread safety: Start and Stop from one thread. Stop is explicit (and run
// by the destructor): it wakes the job and joins it.
#pragma once

#include <chrono>

#include "common/periodic_task.h"

namespace tessera::cluster {

class ReplicaService;

class PaxosPruner {
 public:
  // REQUIRES: replica outlives Stop().
  PaxosPruner(ReplicaService* replica, std::chrono::milliseconds interval) : replica_(replica), interval_(interval) {}
  void Start();
  void Stop() { task_.Stop(); }

 private:
  void PruneOnce();

  ReplicaService* replica_;
  const std::chrono::milliseconds interval_;
  PeriodicTask task_;
};

}  // namespace tessera::cluster
