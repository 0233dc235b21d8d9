// Statements the node runs on its own behalf (system_auth upkeep), without a
// client connection or permission checks: ScyllaDB's execute_internal.
// SELECT returns every row (no paging); INSERT / UPDATE / DELETE apply at
// once; CREATE KEYSPACE / TABLE create. Values bind to the ? markers in
// order (serialized as on the wire, native protocol v4 §6). Reads and writes
// go to the tablets' replicas at `consistency` (ONE unless given), through
// the Coordinator.
//
// Errors: those of parsing and executing the statement; InvalidArgument
// for a statement of another kind.
//
// Thread safety: reentrant.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cql/executor/result_set.h"
#include "cql/protocol/wire.h"
#include "coordinator/coordinator.h"
#include "db/database.h"

namespace tessera::cql {

Result<ResultSet> ExecuteInternal(Coordinator& coordinator, const std::string& cql, const std::vector<WireValue>& values = {},
                                  const RequestConsistency& consistency = kLocalConsistency);
// A SELECT the same way, answered through `done` exactly once without
// holding a thread while replicas answer: run again until it reads nothing
// new (DeferredRead::replay, replayed_read.h), each run's reads made at once.
// Where the reads answer at once (a single node) it answers on the calling
// thread; a table with buckets reads as the run goes (select_executor.h).
// Errors: those of ExecuteInternal; InvalidArgument for a statement that is
// not a SELECT.
void SelectInternalAsync(Coordinator& coordinator, const std::string& cql, std::vector<WireValue> values,
                         const RequestConsistency& consistency, std::function<void(Result<ResultSet>)> done);

// Value helpers for internal statements, through types/serialization.h
// (native protocol v4 §6).
WireValue TextValue(const std::string& text);
WireValue BooleanValue(bool value);
WireValue TextSetValue(const std::set<std::string>& values);
WireValue TextMapValue(const std::map<std::string, std::string>& values);
// Decoders for result cells; a null or malformed cell gives the empty value.
bool BooleanOf(const std::optional<std::string>& cell);
std::set<std::string> TextSetOf(const std::optional<std::string>& cell);
std::map<std::string, std::string> TextMapOf(const std::optional<std::string>& cell);

}  // namespace tessera::cql
