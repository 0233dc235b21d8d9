// system_traces.sessions and system_traces.events from the node's
// TraceStore (system_tables.h).
#include <algorithm>

#include "cql/executor/system_tables.h"
#include "cql/executor/virtual_row_builder.h"
#include "tracing/trace_store.h"
#include "types/value_compare.h"

namespace tessera::cql {
namespace {

void AddSession(const TableSchema& t, const tracing::TraceSessionRecord& s, std::vector<SourceRow>* rows) {
  if (t.name == "sessions") {
    RowBuilder b(t);
    b.Set("session_id", Value::Bytes(s.session_id)).Inet("client", s.client).Text("command", s.command)
        .Inet("coordinator", s.coordinator).Int("coordinator_port", 7000).TextMap("parameters", s.parameters)
        .Text("request", s.request).Int("started_at", s.started_at_millis);
    if (s.duration_micros >= 0) b.Int("duration", s.duration_micros);
    rows->push_back(b.Take());
    return;
  }
  std::vector<const tracing::TraceEvent*> events;
  for (const auto& e : s.events) events.push_back(&e);
  std::stable_sort(events.begin(), events.end(), [](const auto* l, const auto* r) {
    return UuidTimestamp(l->event_id) < UuidTimestamp(r->event_id);  // events in time order
  });
  for (const auto* e : events) {
    RowBuilder b(t);
    b.Set("session_id", Value::Bytes(s.session_id)).Set("event_id", Value::Bytes(e->event_id))
        .Text("activity", e->activity).Inet("source", e->source).Int("source_elapsed", e->source_elapsed_micros)
        .Int("source_port", 7000).Text("thread", e->thread);
    rows->push_back(b.Take());
  }
}

}  // namespace

std::vector<SourceRow> SystemTables::TraceRows(const TableSchema& t, const std::vector<std::string>* session_ids) const {
  std::vector<SourceRow> rows;
  if (node_.traces == nullptr) return rows;
  if (session_ids != nullptr) {
    for (const auto& id : *session_ids) {
      if (auto s = node_.traces->Find(id)) AddSession(t, *s, &rows);
    }
    return rows;
  }
  for (const auto& s : node_.traces->Sessions()) AddSession(t, s, &rows);
  return rows;
}

Result<std::vector<SourceRow>> SystemTables::PartitionRows(
    const TableSchema& t, const std::vector<std::vector<std::string>>& partition_keys) const {
  if (t.keyspace != "system_traces") return Rows(t);
  std::vector<std::string> ids;
  for (const auto& key : partition_keys) {
    if (key.size() == 1 && key[0].size() == 16) ids.push_back(key[0]);
  }
  return TraceRows(t, &ids);
}

}  // namespace tessera::cql
