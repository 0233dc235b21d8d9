#include "tracing/trace_session.h"

#include <pthread.h>

#include <algorithm>
#include <climits>

#include "common/steady_micros.h"
#include "common/time_uuid.h"

namespace tessera::tracing {
namespace {

// The thread's name as the OS has it (asio and gRPC name theirs), as Cassandra's events name theirs.
std::string ThreadName() {
  char name[32] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return {};
  return name;
}

}  // namespace

TraceSession::TraceSession(TraceSessionRecord record)
    : session_id_(record.session_id), started_steady_micros_(SteadyMicros()), record_(std::move(record)) {}

void TraceSession::Event(std::string activity) {
  TraceEvent e;
  e.event_id = NewTimeUuid();
  e.activity = std::move(activity);
  e.thread = ThreadName();
  const int64_t elapsed = SteadyMicros() - started_steady_micros_;
  e.source_elapsed_micros = static_cast<int32_t>(std::min<int64_t>(elapsed, INT32_MAX));
  std::lock_guard<std::mutex> lock(mu_);
  if (record_.events.size() >= kMaxEvents) return;
  e.source = record_.coordinator;
  record_.events.push_back(std::move(e));
}

void TraceSession::AddSteps(std::vector<TraceEvent> steps, const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& e : steps) {
    if (record_.events.size() >= kMaxEvents) return;
    e.source = source;
    record_.events.push_back(std::move(e));
  }
}

ReplicaSteps::ReplicaSteps() : started_steady_micros_(SteadyMicros()) {}

void ReplicaSteps::Event(std::string activity) {
  if (events_.size() >= TraceSession::kMaxEvents) return;
  TraceEvent e;
  e.event_id = NewTimeUuid();
  e.activity = std::move(activity);
  e.thread = ThreadName();
  e.source_elapsed_micros = static_cast<int32_t>(std::min<int64_t>(SteadyMicros() - started_steady_micros_, INT32_MAX));
  events_.push_back(std::move(e));
}

void TraceSession::Finish() {
  const int64_t elapsed = SteadyMicros() - started_steady_micros_;
  std::lock_guard<std::mutex> lock(mu_);
  if (record_.duration_micros < 0) record_.duration_micros = static_cast<int32_t>(std::min<int64_t>(elapsed, INT32_MAX));
}

TraceSessionRecord TraceSession::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return record_;
}

}  // namespace tessera::tracing
