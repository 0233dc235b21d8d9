// PlacementFence: lets a node wait until no write routed by an older
// version of a tablet placement is still in flight, the local half of a
// migration stage's barrier (cluster/tablet_transition.h).
//
// A coordinator's write Enters before it reads the placement and Exits once
// acknowledged or timed out (WriteGuard does both). Drain, called after a
// new placement is in the cache, waits for every write that entered before
// it; writes entering later read the new placement. Unlike a reader-writer
// lock, a steady stream of writes cannot starve Drain: it waits only for
// writes older than itself.
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
  // Returns false when writes older than the call were still in flight
  // after `limit` (they are bounded by the write time-out, so only a stuck
  // replica call makes this happen).
  bool Drain(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t before = epoch_++;
    return drained_.wait_for(lock, limit,
                             [&] { return in_flight_.empty() || in_flight_.begin()->first > before; });
  }

  class WriteGuard {
   public:
    explicit WriteGuard(PlacementFence* fence) : fence_(fence), epoch_(fence->Enter()) {}
    ~WriteGuard() { fence_->Exit(epoch_); }
    WriteGuard(const WriteGuard&) = delete;
    WriteGuard& operator=(const WriteGuard&) = delete;

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
