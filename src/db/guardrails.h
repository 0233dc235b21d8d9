// Guardrails: the thresholds at which Tessera warns about (and at which it
// refuses) data shapes that hurt a wide-column store. Warn thresholds are the
// seeds' advice; fail thresholds are Cassandra's hard limits.
//
// Warnings reach the client in the CQL response's warnings (native protocol
// v4 §2.2, flag 0x08) and the server log. Sizes are bytes; 0 disables a
// fail threshold.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera {

struct Guardrails {
  // One primary-key component: warn at 1 KB; Cassandra refuses keys over 65,535 bytes.
  size_t key_warn_bytes = 1024;
  size_t key_fail_bytes = 65535;
  // One cell: warn at 2 MB; fail at 16 MB (Cassandra's default max_mutation_size).
  size_t cell_warn_bytes = 2u << 20;
  size_t cell_fail_bytes = 16u << 20;
  // One row written by one statement: warn at 64 KB.
  size_t row_warn_bytes = 64u << 10;
  // One partition: warn at 100,000 rows or 100 MB; fail at Cassandra's limit
  // of 2 billion cells per partition (counted here as rows); no byte limit.
  uint64_t partition_rows_warn = 100000;
  uint64_t partition_rows_fail = 2'000'000'000;
  uint64_t partition_bytes_warn = 100ull << 20;
  uint64_t partition_bytes_fail = 0;
  // Tombstones visited by one read: warn at 1,000; fail at 100,000
  // (Cassandra's tombstone_warn_threshold / tombstone_failure_threshold).
  uint64_t tombstone_warn = 1000;
  uint64_t tombstone_fail = 100000;

  // Whether a partition of `rows` rows and `bytes` bytes is above a (non-zero) partition warn threshold.
  bool PartitionAboveWarn(uint64_t rows, uint64_t bytes) const {
    return (partition_rows_warn > 0 && rows > partition_rows_warn) ||
           (partition_bytes_warn > 0 && bytes > partition_bytes_warn);
  }
};

}  // namespace tessera
