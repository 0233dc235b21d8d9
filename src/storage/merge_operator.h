// The RocksDB merge operator that reconciles stored values: row fragments
// (row_fragment.h) and partition headers (partition_header.h), told apart by
// their first byte. Because reconciliation is last-write-wins per cell and
// commutative, every write is a merge operand and no write reads first.
//
// Thread safety: the operator is stateless and thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace rocksdb {
class MergeOperator;
}

namespace tessera {

// Reconciles an optional existing value with operands (oldest first).
// Errors: Corruption if a value does not decode or the value types differ.
Status MergeStoredValues(std::optional<std::string_view> existing, const std::vector<std::string_view>& operands,
                         std::string* out);

// What the merge operator reconciled since the engine opened: every full
// merge (a read of a key with operands, a flush or compaction folding them, a
// write that max_successive_merges turns into a whole value) counts once, with
// the operands it folded, in buckets of at most 1, 4, 16, 64, 256 operands and
// above. A chain that keeps growing shows as merges in the high buckets.
// Thread safety: relaxed atomics, updated from any RocksDB thread.
struct MergeOperandStats {
  static constexpr size_t kBuckets = 6;
  static constexpr uint64_t kBucketBounds[kBuckets - 1] = {1, 4, 16, 64, 256};
  std::atomic<uint64_t> full_merges{0};
  std::atomic<uint64_t> operands{0};
  std::atomic<uint64_t> by_operands[kBuckets] = {};
  void Record(uint64_t count);
};

// REQUIRES: stats (may be null) outlives the operator.
std::shared_ptr<rocksdb::MergeOperator> NewReconcilingMergeOperator(MergeOperandStats* stats = nullptr);

}  // namespace tessera
