// Paxos ballots (issue 30): version-1 time uuids, as Cassandra's (its
// ballots are timeuuids: UUIDGen.getRandomTimeUUIDFromMicros). A ballot
// orders by its time, then by its remaining bytes (clock sequence and node),
// so two coordinators never make equal ballots.
//
// Shape: 16 bytes, RFC 4122 version 1: the time is 100-ns intervals since
// 1582-10-15 (Cassandra's timeuuid epoch); the node bytes are the last 6 bytes
// of the host id and the clock sequence is random per clock. The empty string
// is "no ballot", below every ballot. FROZEN ON THE WIRE and on disk (the
// replicas' Paxos state, cluster/paxos_state.h).
//
// Thread safety: BallotClock is thread-safe; the functions are pure.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::cluster {

// Microseconds since the Unix epoch of a ballot (0 for "no ballot").
int64_t BallotMicros(std::string_view ballot);
// <0, 0, >0 as a orders before, with, after b.
int CompareBallots(std::string_view a, std::string_view b);
// The larger of two ballots.
const std::string& MaxBallot(const std::string& a, const std::string& b);

// Makes ballots whose time never goes backwards on this node and is later
// than any ballot it was told of (a replica's refusal names the ballot that
// beat a round: the next round's must be later).
class BallotClock {
 public:
  // `node`: 16-byte host id (its last 6 bytes become the node field).
  explicit BallotClock(std::string node);
  // A new ballot, later than every earlier one of this clock and than
  // `at_least_micros` (the time of a ballot seen elsewhere; 0: none).
  std::string Next(int64_t at_least_micros = 0);

 private:
  std::string node_;
  uint16_t clock_sequence_;
  std::atomic<int64_t> last_micros_{0};
};

}  // namespace tessera::cluster
