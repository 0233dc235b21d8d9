// LatencyHistogram: a lock-free, fixed-bucket latency histogram in the shape
// Prometheus exposes (cumulative "le" buckets, a sum and a count).
//
// Buckets are upper bounds in microseconds, roughly 1-2.5-5 per decade from
// 50 us to 1 s, plus +Inf. Thread safety: Record and the readers are
// thread-safe (relaxed atomics; a reader may see a record half-counted).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace tessera {

class LatencyHistogram {
 public:
  static constexpr std::array<int64_t, 14> kBoundsMicros = {50,    100,    250,    500,    1000,   2500,   5000,
                                                            10000, 25000, 50000, 100000, 250000, 500000, 1000000};

  void Record(int64_t micros) {
    size_t i = 0;
    while (i < kBoundsMicros.size() && micros > kBoundsMicros[i]) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_micros_.fetch_add(static_cast<uint64_t>(micros < 0 ? 0 : micros), std::memory_order_relaxed);
  }
  // Observations in bucket i (not cumulative); i == kBoundsMicros.size() is +Inf.
  uint64_t Count(size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  uint64_t SumMicros() const { return sum_micros_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, kBoundsMicros.size() + 1> counts_{};
  std::atomic<uint64_t> sum_micros_{0};
};

}  // namespace tessera
