// What a node served as a replica, per table, read over its admin HTTP port
// from the Prometheus exposition (GET /metrics; server/metrics_text.h):
// the tessera_table_replica_reads_total and
// tessera_table_replica_writes_total counters of one keyspace.
//
// Thread safety: ReadServedTotals is reentrant (one HTTP client per call).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"

namespace tessera {

struct ServedTotals {
  uint64_t reads = 0, writes = 0;  // requests since the node started
};

// The counters of every table of `keyspace` on the node whose admin port is
// address:admin_port, by table name (tables without samples are absent).
// IOError when the node does not answer within timeout_ms or answers
// anything but 200.
Result<std::map<std::string, ServedTotals>> ReadServedTotals(const std::string& address, int admin_port,
                                                             const std::string& keyspace, int timeout_ms = 2000);

// The same parsed from exposition text (for tests and other transports).
std::map<std::string, ServedTotals> ParseServedTotals(const std::string& exposition, const std::string& keyspace);

}  // namespace tessera
