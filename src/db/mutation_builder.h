// Turns a Mutation into storage keys and reconciling merge operands.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "db/mutation.h"
#include "storage/storage_engine.h"

namespace tessera {

struct BuiltMutation {
  // The partition's position (partition-bucketed tables: the logical one), for
  // the guardrails and the hot- and large-partition tracking.
  std::string partition_position;
  size_t row_writes = 0;           // rows, row deletions, range and partition deletions
  // Where the writes go, each part routed to the tablet of its position: the
  // partition position, or on a partition-bucketed table each sub-partition written.
  struct Part {
    std::string position;
    size_t row_writes = 0;
    size_t bytes = 0;              // key + value bytes, as WriteSet::bytes
  };
  std::vector<Part> parts;
};

// Validates `m` against its table and appends its writes to *out.
// `now_micros` supplies the timestamp when the mutation has none, and the
// local deletion / expiry times.
// Errors: InvalidArgument naming the column or key component at fault
// (unknown column, key column written as a cell, static cell in a clustering
// row, value of the wrong type, wrong key arity, negative TTL).
// Partition-bucketed tables: the header and the static row go to sub-partition
// 0, a clustering row to its sub-partition under the current count, and a row
// deletion also to its sub-partition under every earlier count (types/schema.h).
Result<BuiltMutation> BuildWriteSet(const Mutation& m, int64_t now_micros, WriteSet* out);

}  // namespace tessera
