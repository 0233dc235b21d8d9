#include "cluster/paxos_ballot.h"

#include <algorithm>
#include <chrono>
#include <random>

namespace tessera::cluster {
namespace {

// 100-ns intervals between 1582-10-15 and 1970-01-01.
constexpr int64_t kUuidEpochOffset = 0x01B21DD213814000LL;

uint64_t UuidTime(std::string_view b) {
  const auto* u = reinterpret_cast<const unsigned char*>(b.data());
  const uint64_t low = (uint64_t{u[0]} << 24) | (uint64_t{u[1]} << 16) | (uint64_t{u[2]} << 8) | u[3];
  const uint64_t mid = (uint64_t{u[4]} << 8) | u[5];
  const uint64_t high = ((uint64_t{u[6]} & 0x0F) << 8) | u[7];
  return (high << 48) | (mid << 32) | low;
}

}  // namespace

int64_t BallotMicros(std::string_view ballot) {
  if (ballot.size() != 16) return 0;
  return (static_cast<int64_t>(UuidTime(ballot)) - kUuidEpochOffset) / 10;
}

int CompareBallots(std::string_view a, std::string_view b) {
  if (a.size() != 16 || b.size() != 16) return (a.size() == 16) - (b.size() == 16);
  const uint64_t ta = UuidTime(a), tb = UuidTime(b);
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
  const uint64_t t = static_cast<uint64_t>(micros * 10 + kUuidEpochOffset);
  std::string u(16, '\0');
  u[0] = static_cast<char>(t >> 24);
  u[1] = static_cast<char>(t >> 16);
  u[2] = static_cast<char>(t >> 8);
  u[3] = static_cast<char>(t);
  u[4] = static_cast<char>(t >> 40);
  u[5] = static_cast<char>(t >> 32);
  u[6] = static_cast<char>(((t >> 56) & 0x0F) | 0x10);  // version 1
  u[7] = static_cast<char>(t >> 48);
  u[8] = static_cast<char>(((clock_sequence_ >> 8) & 0x3F) | 0x80);  // RFC 4122 variant
  u[9] = static_cast<char>(clock_sequence_);
  for (int i = 0; i < 6; ++i) u[10 + i] = node_[10 + i];
  return u;
}

}  // namespace tessera::cluster
