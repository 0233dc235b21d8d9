// LoadWindow: events per second over a sliding window of whole seconds, in
// one-second buckets — the load signal for load-based splits and for the
// rates system.tablets shows.
//
// Lock-free: a bucket is claimed for a new second with a compare-and-swap
// and counted with atomic adds. A few events may be lost when two threads
// roll the same bucket over at once; the rate is an estimate, not a ledger.
//
// Thread safety: Add and Rate are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace tessera {

class LoadWindow {
 public:
  static constexpr int kSeconds = 10;

  // Counts `n` events at `now_micros`.
  void Add(int64_t now_micros, uint64_t n);
  // Events per second over the last kSeconds whole seconds before now.
  double Rate(int64_t now_micros) const;
  // The same for a counter that started at `since_micros`: divides by the
  // whole seconds since then while that is under kSeconds (at least 1), so a
  // young tablet's rate is not diluted by seconds before it existed.
  double Rate(int64_t now_micros, int64_t since_micros) const;
  // Adds `share` (0 to 1) of `other`'s counts to this window, second by
  // second: a split half starts from its share of the parent's recent load,
  // a merged tablet from the sum of both tablets', so neither reads as idle
  // for its first second. A second this window counts newer than `other`'s
  // in the same bucket is kept. REQUIRES: no concurrent Add to this window
  // (it is not yet published); `other` may be counting meanwhile.
  void InheritFrom(const LoadWindow& other, double share);

 private:
  struct Bucket {
    std::atomic<int64_t> second{INT64_MIN};
    std::atomic<uint64_t> count{0};
  };
  std::array<Bucket, kSeconds + 1> buckets_;  // + the current, partial second
};

}  // namespace tessera
