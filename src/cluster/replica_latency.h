// ReplicaLatency: what a coordinator has seen of each peer's answers, so that
// reads go to the replicas that answer fastest and avoid one that stopped
// answering long before its etcd lease expires (issue 28, item 3; after
// Cassandra's DynamicEndpointSnitch and ScyllaDB's heat-weighted load
// balancing).
//
// Per peer (host id, 16 bytes): an exponentially weighted moving average of
// its response times (microseconds, weight 1/8 per answer) and its requests
// in flight. A peer's score is the average times (1 + requests in flight);
// a request outstanding longer than the read time-out's speculative
// threshold, or a failed or timed-out answer, marks the peer slow for
// kSlowMicros (it then sorts after every peer that is not), so one replica
// under SIGSTOP or behind a partition is avoided from its first missed
// answer on.
//
// Thread safety: thread-safe (one mutex; a map lookup per call).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::cluster {

class ReplicaLatency {
 public:
  static constexpr int64_t kSlowMicros = 2'000'000;  // how long a missed answer counts against a peer

  // A request was sent to `host`.
  void Sent(const std::string& host);
  // Its answer came after `micros`; `ok` false for an error or a time-out.
  void Answered(const std::string& host, int64_t micros, bool ok, int64_t now_micros);
  // `host` did not answer within a speculative threshold (still in flight).
  void Missed(const std::string& host, int64_t now_micros);
  // Lower is better; a slow peer scores above every peer that is not. An
  // unknown peer scores as the mean of the known ones' (0 when none).
  double Score(const std::string& host, int64_t now_micros) const;
  // `hosts` ordered by score, stable for equal scores (placement order).
  std::vector<std::string> Order(std::vector<std::string> hosts, int64_t now_micros) const;
  // The peer's moving average, microseconds; 0 when it never answered.
  int64_t AverageMicros(const std::string& host) const;

 private:
  struct Peer {
    double average_micros = 0;  // 0: no answer yet
    int in_flight = 0;
    int64_t slow_until_micros = 0;
  };
  double ScoreLocked(const Peer* peer, int64_t now_micros) const;
  mutable std::mutex mu_;
  std::map<std::string, Peer> peers_;
};

}  // namespace tessera::cluster
