// Turns a Mutation into storage keys and reconciling merge operands.
//
// Thread safety: pure function.
#pragma once

#include <string>

#include "common/status.h"
#include "db/mutation.h"
#include "storage/storage_engine.h"

namespace tessera {

struct BuiltMutation {
  std::string partition_position;  // routes the mutation to a tablet
  size_t row_writes = 0;           // rows, row deletions, range and partition deletions
};

// Validates `m` against its table and appends its writes to *out.
// `now_micros` supplies the timestamp when the mutation has none, and the
// local deletion / expiry times.
// Errors: InvalidArgument naming the column or key component at fault
// (unknown column, key column written as a cell, static cell in a clustering
// row, value of the wrong type, wrong key arity, negative TTL).
Result<BuiltMutation> BuildWriteSet(const Mutation& m, int64_t now_micros, WriteSet* out);

}  // namespace tessera
