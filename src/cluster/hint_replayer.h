// HintReplayer: delivers the hints of HintStore (cluster/hint_store.h) to
// their replicas once those are up again (Cassandra 4.1's
// HintsDispatchExecutor, simplified). A background thread looks every
// `interval_micros` for targets that have hints and are alive in the
// membership; it sends their hints oldest first, one internode Apply each,
// and removes a hint once the replica acknowledged it. A failed send stops
// that target's round (it is tried again next round); an expired hint is
// removed without being sent.
//
// Thread safety: Start and Stop from one thread; Stop joins the thread
// (within one send's time-out).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/hint_store.h"
#include "cluster/internode_client.h"
#include "cluster/membership.h"

namespace tessera::cluster {

struct HintReplayOptions {
  int64_t interval_micros = 500'000;
  int64_t send_timeout_micros = 10'000'000;
  size_t batch = 64;  // hints read from the store at a time
};

class HintReplayer {
 public:
  // REQUIRES: membership and client outlive the replayer.
  HintReplayer(std::shared_ptr<HintStore> store, Membership* membership, InternodeClient* client,
               HintReplayOptions options = {});
  ~HintReplayer();  // Stop()

  void Start();
  void Stop();
  // One round now, on the caller's thread (tests). Returns hints delivered.
  uint64_t ReplayOnce();

 private:
  void Run();
  // Delivers the target's hints; false when a send failed.
  bool Deliver(const std::string& host_id, const std::string& endpoint, uint64_t* delivered);

  std::shared_ptr<HintStore> store_;
  Membership* membership_;
  InternodeClient* client_;
  HintReplayOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tessera::cluster
