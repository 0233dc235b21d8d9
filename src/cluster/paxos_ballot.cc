#include "cluster/paxos_ballot.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "common/time_uuid.h"
#include "types/value_compare.h"

namespace tessera::cluster {

int64_t BallotMicros(std::string_view ballot) {
  if (ballot.size() != 16) return 0;
  return (static_cast<int64_t>(UuidTimestamp(ballot)) - kGregorianOffset100ns) / 10;
}

int CompareBallots(std::string_view a, std::string_view b) {
  if (a.size() != 16 || b.size() != 16) return (a.size() == 16) - (b.size() == 16);
  const uint64_t ta = UuidTimestamp(a), tb = UuidTimestamp(b);
  if (ta != tb) return ta < tb ? -1 : 1;
  const int c = a.substr(8).compare(b.substr(8));
  return c < 0 ? -1 : c > 0;
}

const std::string& MaxBallot(const std::string& a, const std::string& b) { return CompareBallots(a, b) >= 0 ? a : b; }

BallotClock::BallotClock(std::string node) : node_(std::move(node)) {
  node_.resize(16, '\0');
  std::random_device rd;
  clock_sequence_ = static_cast<uint16_t>(rd() & 0x3FFF);
}

std::string BallotClock::Next(int64_t at_least_micros) {
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_micros_.load();
  int64_t micros;
  do {
    micros = std::max<int64_t>({now, last + 1, at_least_micros + 1});
  } while (!last_micros_.compare_exchange_weak(last, micros));
  // RFC 4122 variant and the clock sequence, then the node's last 6 bytes.
  uint64_t clock_seq_and_node = static_cast<uint64_t>((clock_sequence_ & 0x3FFF) | 0x8000) << 48;
  for (int i = 0; i < 6; ++i) {
    clock_seq_and_node |= static_cast<uint64_t>(static_cast<uint8_t>(node_[10 + static_cast<size_t>(i)])) << (40 - 8 * i);
  }
  return TimeUuidOf(micros * 10 + kGregorianOffset100ns, clock_seq_and_node);
}

}  // namespace tessera::cluster
