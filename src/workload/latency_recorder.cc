#include "workload/latency_recorder.h"

#include <algorithm>
#include <bit>

namespace tessera::workload {

// Values below 2^kSubBucketBits map one to one; above, a value with its top
// bit at position e (e >= kSubBucketBits) falls in bucket e - kSubBucketBits + 1,
// sub-bucket = its kSubBucketBits bits below the top bit.
size_t LatencyRecorder::Index(int64_t v) {
  const auto u = static_cast<uint64_t>(std::max<int64_t>(v, 0));
  constexpr uint64_t kSub = uint64_t{1} << kSubBucketBits;
  if (u < kSub) return static_cast<size_t>(u);
  const int top = 63 - std::countl_zero(u);
  const int shift = top - kSubBucketBits;
  const size_t bucket = static_cast<size_t>(std::min(shift + 1, kMaxExponent));
  const size_t sub = static_cast<size_t>((u >> shift) & (kSub - 1));
  return (bucket << kSubBucketBits) + sub;
}

int64_t LatencyRecorder::UpperBound(size_t index) {
  constexpr uint64_t kSub = uint64_t{1} << kSubBucketBits;
  const size_t bucket = index >> kSubBucketBits, sub = index & (kSub - 1);
  if (bucket == 0) return static_cast<int64_t>(sub);
  const int shift = static_cast<int>(bucket) - 1;
  return static_cast<int64_t>((((kSub + sub + 1) << shift)) - 1);
}

void LatencyRecorder::Record(int64_t micros) {
  ++counts_[std::min(Index(micros), counts_.size() - 1)];
  ++count_;
  max_ = std::max(max_, micros);
  sum_ += micros;
}

void LatencyRecorder::Merge(const LatencyRecorder& o) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  max_ = std::max(max_, o.max_);
  sum_ += o.sum_;
}

int64_t LatencyRecorder::Percentile(double percentile) const {
  if (count_ == 0) return 0;
  const auto target = static_cast<uint64_t>(std::max(1.0, percentile / 100.0 * static_cast<double>(count_) + 0.5));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= target) return std::min(UpperBound(i), max_);
  }
  return max_;
}

}  // namespace tessera::workload
