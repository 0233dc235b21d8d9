// Query tracing (issue 31 item 4), after Cassandra's: a request sent with
// the tracing flag (native protocol v4 §2.2) or picked by the node's trace
// probability (nodetool settraceprobability) records its steps in a
// TraceSession: what was done, where and when, in microseconds since the
// session began. system_traces.sessions and system_traces.events show the
// sessions a TraceStore (tracing/trace_store.h) holds, with Cassandra 4.0's
// columns (cql/executor/system_tables.h).
//
// A session travels with its request as a parameter (RequestConsistency::
// trace, tablets/request_consistency.h), never in a thread-local: a request
// continues on whichever thread a replica's answer arrives on.
//
// Thread safety: thread-safe; Event may be called from any thread, also
// after Finish (a replica's answer that comes after the reply is recorded
// too, as in Cassandra).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::tracing {

struct TraceEvent {
  std::string event_id;               // 16 bytes: a timeuuid of when it happened
  std::string activity;               // what happened, in words
  std::string source;                 // the address (text) of the node that recorded it
  int32_t source_elapsed_micros = 0;  // since the session began, on that node
  std::string thread;                 // the recording thread's name
};

// What system_traces.sessions holds for a session (Cassandra's columns).
struct TraceSessionRecord {
  std::string session_id;  // 16 bytes, a timeuuid
  std::string client;      // the client's address (text)
  std::string command;     // "QUERY"
  std::string coordinator; // this node's address (text)
  std::string request;     // "Execute CQL3 query", "Execute CQL3 prepared query", ...
  std::map<std::string, std::string> parameters;  // query, consistency_level, page_size, ...
  int64_t started_at_millis = 0;                  // since the Unix epoch
  int32_t duration_micros = -1;                   // -1 while the request runs (null in the table)
  std::vector<TraceEvent> events;                 // in the order recorded
};

class TraceSession {
 public:
  // `record` gives everything but, for a new session, the events and the
  // duration (a session another node sent comes with both).
  // REQUIRES: record.session_id is 16 bytes.
  explicit TraceSession(TraceSessionRecord record);

  const std::string& session_id() const { return session_id_; }
  // Records a step now. Events past kMaxEvents are dropped (a runaway scan
  // cannot grow a session without bound).
  void Event(std::string activity);
  // Steps another node (a replica) took for this request and sent back
  // (ReplicaSteps), recorded as they are with `source` (its address) as
  // their source; their elapsed times are that node's, as in Cassandra.
  void AddSteps(std::vector<TraceEvent> steps, const std::string& source);
  // The request was answered: sets the duration (once).
  void Finish();
  TraceSessionRecord Snapshot() const;

  static constexpr size_t kMaxEvents = 100;

 private:
  const std::string session_id_;
  const int64_t started_steady_micros_;
  mutable std::mutex mu_;
  TraceSessionRecord record_;  // guarded by mu_
};

// The steps a replica takes for a traced request from another node's
// coordinator: recorded here with the time since the replica received it,
// sent back in its answer, and added to the coordinator's session
// (TraceSession::AddSteps). Cassandra's replicas write their own events
// under the coordinator's session id; here they travel with the answer.
//
// Thread safety: one thread at a time.
class ReplicaSteps {
 public:
  ReplicaSteps();  // the replica received the request now
  void Event(std::string activity);
  std::vector<TraceEvent>& events() { return events_; }

 private:
  const int64_t started_steady_micros_;
  std::vector<TraceEvent> events_;
};

}  // namespace tessera::tracing
