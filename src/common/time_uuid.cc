#include "common/time_uuid.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>

#include "common/bytes.h"

namespace tessera {

std::string TimeUuidOf(int64_t ticks, uint64_t clock_seq_and_node) {
  auto t = static_cast<uint64_t>(ticks);
  std::string u;
  PutBigEndian32(&u, static_cast<uint32_t>(t));                            // time_low
  PutBigEndian16(&u, static_cast<uint16_t>(t >> 32));                      // time_mid
  PutBigEndian16(&u, static_cast<uint16_t>(((t >> 48) & 0x0FFF) | 0x1000)); // version 1
  PutBigEndian64(&u, clock_seq_and_node);
  return u;
}

std::string MakeTimeUuid(int64_t unix_micros, uint64_t random) {
  static std::atomic<int64_t> last_ticks{0};
  int64_t ticks = unix_micros * 10 + kGregorianOffset100ns;
  int64_t prev = last_ticks.load();
  while (true) {  // strictly increasing within the process
    int64_t next = std::max(ticks, prev + 1);
    if (last_ticks.compare_exchange_weak(prev, next)) {
      ticks = next;
      break;
    }
  }
  // Variant and a random clock sequence, then a random node.
  uint64_t clock_seq_and_node = static_cast<uint64_t>((random & 0x3FFF) | 0x8000) << 48;
  for (int i = 0; i < 6; ++i) clock_seq_and_node |= ((random >> (16 + 8 * i)) & 0xFF) << (40 - 8 * i);
  return TimeUuidOf(ticks, clock_seq_and_node);
}

int64_t UnixMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string NewTimeUuid(int64_t unix_micros) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return MakeTimeUuid(unix_micros, rng());
}

}  // namespace tessera
