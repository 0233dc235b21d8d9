// HintReplayer: delivers the hints of HintStore (cluster/hint_store.h) to
// their replicas once those are up again (Cassandra 4.1's
// HintsDispatchExecutor, simplified). A background thread looks every
// `interval_micros` for targets that have hints and are alive in the
// membership; it sends their hints oldest first, one internode Apply each,
// and removes a hint once the replica acknowledged it. A failed send stops
// that target's round (it is tried again next round); an expired hint is
// removed without being sent, as are all hints for a node no longer a
// member (decommissioned or removed), and a hint whose replica no longer
// holds (nor is receiving) the tablet it writes to, by the `wanted` check
// (a move that reverted, or completed elsewhere, while the replica was
// down: delivering would leave a stray copy there).
//
// Thread safety: Start and Stop from one thread; Stop joins the thread
// (within one send's time-out).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/hint_store.h"
#include "cluster/internode_transport.h"
#include "cluster/membership.h"

namespace tessera::cluster {

struct HintReplayOptions {
  int64_t interval_micros = 500'000;
  int64_t send_timeout_micros = 10'000'000;
  size_t batch = 64;  // hints read from the store at a time
  // Whether node `host_id` (16 bytes) still holds or is receiving the tablet
  // of table `table_uuid` (16 bytes) that `writes` (table-relative) go to;
  // unset: every hint is wanted. Called on the replayer's thread.
  std::function<bool(const std::string& host_id, const std::string& table_uuid, const WriteSet& writes)> wanted;
};

class HintReplayer {
 public:
  // REQUIRES: membership and client outlive the replayer.
  HintReplayer(std::shared_ptr<HintStore> store, Membership* membership, InternodeTransport* client,
               HintReplayOptions options = {});
  ~HintReplayer();  // Stop()

  void Start();
  void Stop();
  // One round now, on the caller's thread (tests). Returns hints delivered.
  uint64_t ReplayOnce();

 private:
  void Run();
  // Removes every hint for a node that left the cluster (decommissioned or
  // removed: its record is gone, so it will never come back to take them).
  void DropHintsOf(const std::string& host_id);
  // Delivers the target's hints; false when a send failed.
  bool Deliver(const std::string& host_id, const std::string& endpoint, uint64_t* delivered);

  std::shared_ptr<HintStore> store_;
  Membership* membership_;
  InternodeTransport* client_;
  HintReplayOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tessera::cluster
