// PlacementFence: lets a node wait until no request routed by an older
// version of a tablet placement is still in flight, the local half of a
// migration stage's barrier (cluster/tablet_transition.h), as ScyllaDB's
// barrier drains every request of the old token metadata version.
//
// A coordinator's replica write or read Enters before it reads the
// placement and Exits once answered or timed out (RequestGuard does both).
// Drain, called after a new placement is in the cache, waits for every
// request that entered before it; requests entering later read the new
// placement. Writes: none routed by the old stage reaches a replica after
// the next stage begins. Reads: none routed to a leaving replica is still
// reading when cleanup deletes its copy (two barriers later). Unlike a
// reader-writer lock, a steady stream of requests cannot starve Drain: it
// waits only for requests older than itself.
//
// Thread safety: thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

namespace tessera::cluster {

class PlacementFence {
 public:
  uint64_t Enter() {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_[epoch_];
    return epoch_;
  }
  void Exit(uint64_t epoch) {
    std::lock_guard<std::mutex> lock(mu_);
    if (--in_flight_[epoch] == 0) {
      in_flight_.erase(epoch);
      drained_.notify_all();
    }
  }
  // Returns false when requests older than the call were still in flight
  // after `limit` (they are bounded by the request time-outs, so only a
  // stuck replica call makes this happen).
  bool Drain(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t before = epoch_++;
    return drained_.wait_for(lock, limit,
                             [&] { return in_flight_.empty() || in_flight_.begin()->first > before; });
  }

  class RequestGuard {
   public:
    explicit RequestGuard(PlacementFence* fence) : fence_(fence), epoch_(fence->Enter()) {}
    ~RequestGuard() { fence_->Exit(epoch_); }
    RequestGuard(const RequestGuard&) = delete;
    RequestGuard& operator=(const RequestGuard&) = delete;

   private:
    PlacementFence* fence_;
    uint64_t epoch_;
  };

 private:
  std::mutex mu_;
  std::condition_variable drained_;
  uint64_t epoch_ = 0;
  std::map<uint64_t, int> in_flight_;  // writes per epoch they entered in
};

}  // namespace tessera::cluster
