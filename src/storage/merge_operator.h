// The RocksDB merge operator that reconciles stored values: row fragments
// (row_fragment.h) and partition headers (partition_header.h), told apart by
// their first byte. Because reconciliation is last-write-wins per cell and
// commutative, every write is a merge operand and no write reads first.
//
// Thread safety: the operator is stateless and thread-safe.
#pragma once

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

std::shared_ptr<rocksdb::MergeOperator> NewReconcilingMergeOperator();

}  // namespace tessera
