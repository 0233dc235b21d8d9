// Names the calling thread, as `top -H`, `perf` and /proc/<pid>/task/*/comm
// show it, so that a node's CPU and context switches can be told apart by
// role (CQL I/O threads, waiting request threads, timers, background tasks).
//
// `name`: at most 15 bytes are kept (Linux's limit); longer names are cut.
// Best effort: a failure leaves the old name. Thread safety: any thread.
#pragma once

#include <string_view>

namespace tessera {

void SetCurrentThreadName(std::string_view name);

}  // namespace tessera
