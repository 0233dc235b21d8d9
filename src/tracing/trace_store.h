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
// On a cluster, a session is also held by the other nodes: the coordinator
// sends it to them once answered (the on_finish hook, which the node wires
// to the internode transport), and they Add it, so that a driver reading
// system_traces through any node finds it (Cassandra keeps traces in a
// replicated keyspace for the same reason). Steps recorded after the
// answer stay on the coordinator.
//
// Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
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
  // With TraceSession::kMaxEvents, at most about 400,000 events (tens of
  // MiB) whatever the trace probability; a trace usually has under 20.
  static constexpr size_t kMaxSessions = 4096;
  static constexpr int64_t kRetentionMicros = 24LL * 3600 * 1'000'000;

  // `coordinator`: this node's address (text), the sessions' coordinator and their events' source.
  explicit TraceStore(std::string coordinator);

  // Whether to trace a request: when `requested` (the tracing flag), else
  // when drawn by the probability. Cheap: asked of every request, before
  // anything of a session is built.
  bool ShouldTrace(bool requested) const;
  // A new session, held, for a request from `client`.
  std::shared_ptr<TraceSession> Begin(std::string client, std::string request,
                                      std::map<std::string, std::string> parameters);

  // The request was answered: sets the session's duration (TraceSession::
  // Finish) and hands its record to the on_finish hook, if any.
  void Finish(const std::shared_ptr<TraceSession>& session);
  // Called by Finish with each finished session's record, on the thread
  // that finished it; empty: none. After a call returns, the hook it
  // replaced is not running and will not run (a node clears it before its
  // transport goes). REQUIRES: the hook does not block.
  void set_on_finish(std::function<void(const TraceSessionRecord&)> hook);
  // A finished session another node coordinated (its record as sent), held
  // like this node's own; one already held under the id is replaced.
  void Add(TraceSessionRecord record);

  // InvalidArgument unless 0 <= p <= 1.
  [[nodiscard]] Status set_probability(double p);
  double probability() const { return probability_.load(std::memory_order_relaxed); }

  // Every session held, oldest first (running ones with duration -1).
  std::vector<TraceSessionRecord> Sessions() const;
  // One session by its id (16 bytes), or nullopt.
  std::optional<TraceSessionRecord> Find(const std::string& session_id) const;

 private:
  void DropExpiredLocked(int64_t now_micros);
  void HoldLocked(int64_t began_micros, std::shared_ptr<TraceSession> session);

  const std::string coordinator_;
  std::atomic<double> probability_{0.0};
  mutable std::mutex mu_;
  struct Held {
    int64_t began_micros;  // Unix time
    std::shared_ptr<TraceSession> session;
  };
  std::deque<Held> sessions_;  // oldest first; guarded by mu_
  std::mutex hook_mu_;         // held while the hook runs, and to replace it
  std::function<void(const TraceSessionRecord&)> on_finish_;  // guarded by hook_mu_
};

}  // namespace tessera::tracing
