// What replicated_tablet.cc and replicated_tablet_writes.cc share: a
// replica target, the steady clock the latency estimates count in, and the
// answers gathered from replicas asked in parallel. Internal to those two
// files; not part of any other contract.
//
// Thread safety: Gathered is shared between the asking thread and the
// transport's callbacks (its members under `mu`).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/replicated_tablet.h"

namespace tessera::cluster {

struct ReplicatedTablet::Target {
  ReplicaTarget info;
  std::string endpoint;  // "address:port"; empty for this node
};

// Steady microseconds: what ReplicaLatency and the speculative threshold count in.
inline int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Answers gathered from replicas asked in parallel; shared with the gRPC
// callbacks, which may outlive the request that waited for them.
template <typename T>
struct Gathered {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<T>> answers;
  int answered = 0;
  int succeeded = 0;

  explicit Gathered(size_t n) : answers(n) {}
  void Record(size_t i, T answer, bool ok) {
    std::lock_guard<std::mutex> lock(mu);
    answers[i] = std::move(answer);
    ++answered;
    succeeded += ok;
    cv.notify_all();
  }
  // Waits until `enough` succeeded, all `sent` answered, or the deadline.
  void Wait(int enough, int sent, int64_t timeout_micros) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::microseconds(timeout_micros),
                [&] { return succeeded >= enough || answered >= sent; });
  }
};

}  // namespace tessera::cluster
