// How much memory this process may use: the machine's physical memory, or
// less when a control group limits it (cgroup v2 memory.max, or v1
// memory.limit_in_bytes), as a container runtime sets it. Sizes the block
// cache by default (storage/storage_engine.h).
//
// Thread safety: pure reads of /proc-style files; thread-safe.
#pragma once

#include <cstdint>

namespace tessera {

// Bytes; 0 when nothing can be read.
uint64_t MachineMemoryBytes();

}  // namespace tessera
