// Trace steps and sessions (tracing/trace_session.h) to and from
// internode.proto's TraceStep and TraceSession (FROZEN ON THE WIRE;
// cluster/proto/internode.proto). Included only by the internode_*.cc
// files, which alone see the generated protobuf code.
//
// Thread safety: pure functions.
#pragma once

#include <utility>
#include <vector>

#include "internode.pb.h"
#include "tracing/trace_session.h"

namespace tessera::cluster {

using TraceStepsProto = google::protobuf::RepeatedPtrField<tessera::internode::TraceStep>;

inline void ToTraceSteps(const std::vector<tracing::TraceEvent>& events, TraceStepsProto* out) {
  for (const auto& e : events) {
    tessera::internode::TraceStep* step = out->Add();
    step->set_event_id(e.event_id);
    step->set_activity(e.activity);
    step->set_source(e.source);
    step->set_source_elapsed_micros(e.source_elapsed_micros);
    step->set_thread(e.thread);
  }
}

inline std::vector<tracing::TraceEvent> FromTraceSteps(const TraceStepsProto& steps) {
  std::vector<tracing::TraceEvent> events;
  for (const auto& s : steps) {
    events.push_back({s.event_id(), s.activity(), s.source(), s.source_elapsed_micros(), s.thread()});
  }
  return events;
}

inline void ToTraceSession(const tracing::TraceSessionRecord& session, tessera::internode::TraceSession* out) {
  out->set_session_id(session.session_id);
  out->set_client(session.client);
  out->set_command(session.command);
  out->set_coordinator(session.coordinator);
  out->set_request(session.request);
  out->mutable_parameters()->insert(session.parameters.begin(), session.parameters.end());
  out->set_started_at_millis(session.started_at_millis);
  out->set_duration_micros(session.duration_micros);
  ToTraceSteps(session.events, out->mutable_events());
}

inline tracing::TraceSessionRecord FromTraceSession(const tessera::internode::TraceSession& s) {
  tracing::TraceSessionRecord r;
  r.session_id = s.session_id();
  r.client = s.client();
  r.command = s.command();
  r.coordinator = s.coordinator();
  r.request = s.request();
  r.parameters.insert(s.parameters().begin(), s.parameters().end());
  r.started_at_millis = s.started_at_millis();
  r.duration_micros = s.duration_micros();
  r.events = FromTraceSteps(s.events());
  return r;
}

}  // namespace tessera::cluster
