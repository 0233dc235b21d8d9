#include "cluster/stream_rate_limiter.h"

#include <algorithm>

#include <rocksdb/rate_limiter.h>

namespace tessera::cluster {

StreamRateLimiter::StreamRateLimiter(uint64_t bytes_per_second) : bytes_per_second_(bytes_per_second) {
  if (bytes_per_second_ > 0) {
    limiter_.reset(rocksdb::NewGenericRateLimiter(static_cast<int64_t>(bytes_per_second_)));
  }
}

StreamRateLimiter::~StreamRateLimiter() = default;

void StreamRateLimiter::Take(uint64_t bytes) {
  if (!limiter_) return;
  // One request may ask at most a burst (a refill period's worth).
  const int64_t burst = std::max<int64_t>(1, limiter_->GetSingleBurstBytes());
  for (int64_t left = static_cast<int64_t>(bytes); left > 0; left -= burst) {
    limiter_->Request(std::min(left, burst), rocksdb::Env::IO_USER, nullptr);
  }
}

}  // namespace tessera::cluster
