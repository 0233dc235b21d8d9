// Microseconds of the steady (monotonic) clock: for durations, never for
// timestamps. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace tessera {

inline int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace tessera
