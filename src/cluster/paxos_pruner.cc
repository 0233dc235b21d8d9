#include "cluster/paxos_pruner.h"

#include <spdlog/spdlog.h>

#include "cluster/replica_service.h"

namespace tessera::cluster {

void PaxosPruner::Start() {
  task_.Start(std::chrono::duration_cast<std::chrono::microseconds>(interval_).count(), [this] { PruneOnce(); });
}

void PaxosPruner::PruneOnce() {
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  auto pruned = replica_->PrunePaxosState(now);
  if (!pruned.ok()) {
    spdlog::warn("paxos: pruning the Paxos state failed: {}", pruned.status().ToString());
  } else if (*pruned > 0) {
    spdlog::info("paxos: pruned {} Paxos state rows", *pruned);
  }
}

}  // namespace tessera::cluster
