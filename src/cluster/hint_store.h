// HintStore: hinted handoff's durable queue (Cassandra 4.1's HintsService,
// simplified). A coordinator that could not deliver a write to a replica
// (down when the write was sent, or no answer within the write time-out)
// keeps the write here, addressed to the replica's host id; HintReplayer
// (cluster/hint_replayer.h) delivers it when the replica is up again.
// Writes carry their own cell timestamps, so a hint applied late, or twice,
// reconciles like any other write.
//
// Bounds: at most `max_bytes_per_node` bytes of hints per target (a hint
// beyond is dropped and counted: repair brings that replica back in line),
// and hints older than `max_age_micros` (Cassandra's max_hint_window, 3 h)
// are dropped, not delivered, when their turn comes.
//
// On disk (FROZEN ON DISK): a RocksDB instance of its own (`path`, by
// default <data_dir>/hints), so hints never mix with table data. Key: host
// id (16 bytes) + created micros (8 bytes big-endian) + sequence (8 bytes
// big-endian), so a target's hints sort oldest first. Value: version byte 1,
// table uuid (16 bytes), then per write op: kind byte (0 merge, 1 range
// delete), varint-length key, varint-length value; keys table-relative
// (cluster/replica_reads.h).
//
// Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/storage_engine.h"

namespace tessera::cluster {

struct HintLimits {
  uint64_t max_bytes_per_node = 128u << 20;
  int64_t max_age_micros = 3LL * 3600 * 1'000'000;
};

struct Hint {
  std::string key;          // the hint's store key (for Remove)
  std::string table_uuid;   // 16 bytes
  WriteSet writes;          // table-relative keys
  int64_t created_micros = 0;
};

class HintStore {
 public:
  // Opens (creating if missing) the store at `path`. `clock_micros`: the
  // current time (default: system clock). Errors: IOError from RocksDB.
  static Result<std::shared_ptr<HintStore>> Open(const std::string& path, HintLimits limits = {},
                                                 std::function<int64_t()> clock_micros = nullptr);
  ~HintStore();
  HintStore(const HintStore&) = delete;
  HintStore& operator=(const HintStore&) = delete;

  // Keeps `relative_writes` of table `table_uuid` for replica `host_id`.
  // Errors: Busy when the replica's hints already hold max_bytes_per_node
  // (the hint is dropped and counted); IOError.
  Status Store(const std::string& host_id, const std::string& table_uuid, const WriteSet& relative_writes);
  // Up to `max` of the replica's oldest hints.
  Result<std::vector<Hint>> Oldest(const std::string& host_id, size_t max);
  // Removes a hint, delivered (`delivered`) or expired.
  Status Remove(const std::string& host_id, const Hint& hint, bool delivered);
  // Host ids that have hints waiting.
  std::vector<std::string> Targets() const;
  bool Expired(const Hint& hint) const;

  // Counters since start, and what waits now (for /metrics).
  uint64_t stored() const { return stored_.load(); }
  uint64_t delivered() const { return delivered_.load(); }
  uint64_t dropped() const { return dropped_.load(); }  // over the size bound or the age bound
  uint64_t pending() const;                              // hints waiting, all targets
  uint64_t pending_bytes() const;

 private:
  struct Impl;
  HintStore(std::unique_ptr<Impl> impl, HintLimits limits, std::function<int64_t()> clock);

  std::unique_ptr<Impl> impl_;
  HintLimits limits_;
  std::function<int64_t()> clock_;
  mutable std::mutex mu_;
  struct Queue {
    uint64_t hints = 0, bytes = 0;
  };
  std::map<std::string, Queue> queues_;  // by host id; guarded by mu_
  uint64_t sequence_ = 0;                 // guarded by mu_
  std::atomic<uint64_t> stored_{0}, delivered_{0}, dropped_{0};
};

}  // namespace tessera::cluster
