// LatencyRecorder: an HDR-style histogram of latencies in microseconds —
// log-linear buckets (each power of two split into 128 sub-buckets), so any
// recorded value is reported within 1/128 (0.8%) of itself, from 1 us to
// about 2^40 us, in fixed memory (~40 KiB). As in HdrHistogram (Gil Tene),
// percentiles are the highest value equivalent to the bucket reached.
//
// Thread safety: not synchronised; one recorder per thread, Merge after.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tessera::workload {

class LatencyRecorder {
 public:
  static constexpr int kSubBucketBits = 7;  // 128 sub-buckets per power of two
  static constexpr int kMaxExponent = 40;

  void Record(int64_t micros);
  void Merge(const LatencyRecorder& other);
  uint64_t count() const { return count_; }
  int64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // The value at or below which `percentile` (0..100) of the records fall.
  int64_t Percentile(double percentile) const;

 private:
  static size_t Index(int64_t v);
  static int64_t UpperBound(size_t index);
  std::array<uint64_t, (kMaxExponent + 1) << kSubBucketBits> counts_{};
  uint64_t count_ = 0;
  int64_t max_ = 0;
  int64_t sum_ = 0;
};

}  // namespace tessera::workload
