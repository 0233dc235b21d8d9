// The Prometheus text exposition (format version 0.0.4) of a database's
// tablet-layer metrics, served at GET /metrics on the admin port.
//
//   tessera_tables                                         gauge, no labels
// Per tablet (labels keyspace, table, tablet):
//   tessera_tablet_reads_total, _writes_total            rows (counters)
//   tessera_tablet_read_bytes_total, _written_bytes_total bytes (counters)
//   tessera_tablet_size_bytes, _rows_estimate             gauges
//   tessera_tablet_reads_per_second, _writes_per_second   gauges, over 10 s
//   tessera_tablet_hot                                     1 when above the split threshold
// Per table (labels keyspace, table):
//   tessera_table_tablets, tessera_table_large_partitions  gauges
//   tessera_table_splits_total, tessera_table_merges_total counters
//   tessera_table_read_latency_seconds, _write_latency_seconds histograms
// The storage engine (no labels; storage/storage_engine.h StorageStats):
//   tessera_storage_pending_compaction_bytes, _running_compactions,
//   _level0_files, _memtable_bytes, _immutable_memtables, _wal_files,
//   _wal_bytes                                            gauges
//   tessera_storage_wal_syncs_total                        counter
//   tessera_storage_commitlog_sync{mode="periodic|batch|group"} 1
//   tessera_storage_merge_operands                         histogram of the
//     merge operands each full merge folded (le 1, 4, 16, 64, 256, +Inf)
// A tablet's counters start at zero when a split or merge creates it.
// The CQL server (RenderFrontDoorMetrics, appended by the node):
//   tessera_cql_request_latency_seconds                    histogram
//
// Thread safety: thread-safe (reads the database's thread-safe surfaces).
#pragma once

#include <string>

namespace tessera {
class Database;
class LatencyHistogram;
}

namespace tessera::server {

std::string RenderMetrics(Database& db);
// tessera_cql_request_latency_seconds, the CQL server's histogram of its
// requests (server/cql_server.h request_latency()).
std::string RenderFrontDoorMetrics(const LatencyHistogram& request_latency);

}  // namespace tessera::server
