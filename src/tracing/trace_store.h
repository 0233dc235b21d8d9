// TraceStore: a node's traced requests (tracing/trace_session.h), what its
// system_traces.sessions and system_traces.events list. Cassandra keeps
// them in tables with a 24-hour TTL; here they stay in memory, the newest
// kMaxSessions at most, and no longer than kRetentionMicros (24 h): a node
// restart forgets them.
//
// Which requests are traced: those sent with the tracing flag, and a
// `probability` share of the others (nodetool settraceprobability: 0 by
// default, 0..1).
//
// Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tracing/trace_session.h"

namespace tessera::tracing {

class TraceStore {
 public:
  static constexpr size_t kMaxSessions = 10'000;
  static constexpr int64_t kRetentionMicros = 24LL * 3600 * 1'000'000;

  // `coordinator`: this node's address (text), the sessions' coordinator and their events' source.
  explicit TraceStore(std::string coordinator);

  // A new session for a request from `client`, when `requested` (the
  // tracing flag) or drawn by the probability; else null.
  std::shared_ptr<TraceSession> MaybeBegin(bool requested, std::string client, std::string request,
                                           std::map<std::string, std::string> parameters);

  // InvalidArgument unless 0 <= p <= 1.
  [[nodiscard]] Status set_probability(double p);
  double probability() const { return probability_.load(std::memory_order_relaxed); }

  // Every session held, oldest first (running ones with duration -1).
  std::vector<TraceSessionRecord> Sessions() const;
  // One session by its id (16 bytes), or nullopt.
  std::optional<TraceSessionRecord> Find(const std::string& session_id) const;

 private:
  void DropExpiredLocked(int64_t now_micros);

  const std::string coordinator_;
  std::atomic<double> probability_{0.0};
  mutable std::mutex mu_;
  struct Held {
    int64_t began_micros;  // Unix time
    std::shared_ptr<TraceSession> session;
  };
  std::deque<Held> sessions_;  // oldest first; guarded by mu_
};

}  // namespace tessera::tracing
