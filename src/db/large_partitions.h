// LargePartitionTracker: partitions that are large or growing towards the
// partition guardrail, found while data is written rather than at
// compaction.
//
// Writes feed it the partition's write-count and written-bytes estimates
// (upper bounds from the Space-Saving sketches). Once an estimate reaches
// half of a warn threshold, the partition is queued for measuring; the
// balancer thread (db/tablet_balancer.h) measures it (rows and bytes actually
// stored) and records the result. A partition is measured again each time
// its estimate grows by another tenth of the threshold (or of itself, once
// past the threshold). Measured partitions at or above half a warn threshold
// are kept (system.large_partitions, key_advice); writes to those above a
// warn threshold carry a client warning.
//
// Memory: at most kMaxTracked partitions. Thread safety: all methods are
// thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/guardrails.h"

namespace tessera {

struct LargePartition {
  uint32_t table_id = 0;
  std::string position;  // partition position (keys/storage_key.h)
  uint64_t rows = 0;     // rows stored (live or deleted), counted
  uint64_t bytes = 0;    // stored key and value bytes of the partition
  int64_t measured_micros = 0;
};

class LargePartitionTracker {
 public:
  static constexpr size_t kMaxTracked = 10000;

  explicit LargePartitionTracker(const Guardrails& guardrails) : guardrails_(guardrails) {}

  // Called after a write with the partition's estimates so far.
  void NoteWrite(uint32_t table_id, std::string_view position, uint64_t rows_estimate, uint64_t bytes_estimate);
  // The partitions waiting to be measured; the queue is emptied.
  std::vector<std::pair<uint32_t, std::string>> TakePending();
  // Stores a measurement: kept when at or above half a warn threshold, forgotten otherwise.
  void Record(const LargePartition& measured);
  // The last measurement of a kept partition.
  std::optional<LargePartition> Find(uint32_t table_id, std::string_view position) const;
  std::vector<LargePartition> All() const;
  void ForgetTable(uint32_t table_id);

 private:
  using Key = std::pair<uint32_t, std::string>;
  bool Approaching(uint64_t rows, uint64_t bytes) const;

  const Guardrails guardrails_;
  mutable std::mutex mu_;
  std::map<Key, std::pair<uint64_t, uint64_t>> next_check_;  // rows, bytes estimates that trigger the next measure
  std::vector<Key> pending_;
  std::map<Key, LargePartition> kept_;
  std::atomic<bool> any_kept_{false};
};

}  // namespace tessera
