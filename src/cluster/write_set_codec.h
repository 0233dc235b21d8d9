// The bytes of a WriteSet's operations, as hints (cluster/hint_store.h) and
// the replicas' Paxos state (cluster/paxos_state.h) store them. FROZEN ON
// DISK: per operation, its kind byte (0 merge, 1 range delete), then the
// varint-length-prefixed key and value; the operations follow each other to
// the end of the bytes.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "storage/storage_engine.h"

namespace tessera::cluster {

// Appends the operations of `writes` to `out`.
void AppendWriteOps(const WriteSet& writes, std::string* out);
// Appends the operations in `bytes` (all of them) to `writes`.
// Errors: Corruption for an unknown kind or truncated bytes.
Status DecodeWriteOps(std::string_view bytes, WriteSet* writes);

}  // namespace tessera::cluster
