// The rate at which this node streams tablet data to other replicas during
// migrations (cluster/tablet_migration.h): one budget shared by every move
// the node drives, however many run at once. Backed by RocksDB's
// GenericRateLimiter (token bucket refilled every 100 ms).
//
// Thread safety: thread-safe.
#pragma once

#include <cstdint>
#include <memory>

namespace rocksdb {
class RateLimiter;
}

namespace tessera::cluster {

class StreamRateLimiter {
 public:
  // `bytes_per_second`: 0 for no limit.
  explicit StreamRateLimiter(uint64_t bytes_per_second);
  ~StreamRateLimiter();

  // Blocks until `bytes` more may be streamed (at once when unlimited).
  void Take(uint64_t bytes);
  uint64_t bytes_per_second() const { return bytes_per_second_; }

 private:
  const uint64_t bytes_per_second_;
  std::unique_ptr<rocksdb::RateLimiter> limiter_;  // null: unlimited
};

}  // namespace tessera::cluster
