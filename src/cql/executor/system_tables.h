// The system tables drivers read on connect and after schema changes
// (shared reference cql-driver-requirements.md): system.local, system.peers,
// system.peers_v2, system_schema.{keyspaces, tables, dropped_columns, columns, types,
// functions, aggregates, triggers, indexes, views} and
// system_virtual_schema.{keyspaces, tables, columns}, with Cassandra 4.0's
// columns and types (4.1's: memtable, dropped_columns), computed from the
// catalog on every read. system_schema.views also keeps the 3.x columns
// dclocal_read_repair_chance and read_repair_chance, as ScyllaDB does,
// because the Go driver gocql 1.3.2 (Debian's) reads them in
// KeyspaceMetadata.
//
// Tessera's own virtual tables (the tablet layer made visible):
//  - system.tablets: per tablet its key range (hex storage-key bounds), size
//    and row estimates, reads and writes (rows) and bytes since it was
//    created, rows read and written per second over the last 10 s, and its state;
//  - system.tablet_events: splits and merges with their reason and time;
//  - system.paxos (Cassandra's columns): this node's Paxos state per
//    partition (row_key: the partition's position; cf_id: the table uuid),
//    from ClusterView::PaxosRows; empty on a single node;
//  - system.hot_partitions: per table the busiest partitions by row writes
//    and by reads (Space-Saving top-K: count is an upper bound, count - error
//    a lower bound), with their share of all operations.
//
// system_traces.sessions and system_traces.events (Cassandra 4.0's columns)
// list the traced requests NodeInfo::traces holds (tracing/trace_store.h):
// this node's, as their coordinator; empty without a store.
//
// system_views.settings (Cassandra 4.0's virtual table: name, value) lists
// NodeInfo::settings as given (in name order).
//
// system.local reports release_version 4.0.11, the Murmur3 partitioner, one
// token, the node's data center and rack ("datacenter1" / "rack1" by
// default), and a schema_version uuid hashed from the schema itself, so that
// nodes holding the same schema report the same version (drivers wait for
// that agreement after DDL). In a cluster, system.peers and system.peers_v2
// list every other member from the ClusterView, alive or not; a single
// node's are empty.
//
// Thread safety: thread-safe (reads the catalog, which is).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/coordinator.h"
#include "cql/executor/cluster_view.h"
#include "cql/executor/select_statement.h"
#include "db/database.h"

namespace tessera::tracing {
class TraceStore;
}

namespace tessera::cql {

struct NodeInfo {
  std::string rpc_address = "127.0.0.1";  // the CQL listen address
  int32_t rpc_port = 9042;
  std::string cluster_name = "Tessera";
  std::string host_id;  // 16 bytes; random when empty
  std::string data_center = "datacenter1";
  std::string rack = "rack1";
  int64_t token = INT64_MIN;                // the token reported to drivers without a cluster
  const ClusterView* cluster = nullptr;     // null on a single node; outlives the tables
  // system_views.settings: (name, value) of the settings in effect, e.g.
  // commitlog_sync, in name order (server/node_settings.h).
  std::vector<std::pair<std::string, std::string>> settings;
  // The traced requests of this node (system_traces); null: no tracing.
  tracing::TraceStore* traces = nullptr;
};

class SystemTables : public VirtualTables {
 public:
  // REQUIRES: coordinator (with its database) outlives the tables.
  SystemTables(Coordinator* coordinator, NodeInfo node);
  std::shared_ptr<const TableSchema> Find(const std::string& keyspace, const std::string& table) const override;
  Result<std::vector<SourceRow>> Rows(const TableSchema& table) const override;
  // system_traces' tables: only the sessions asked for; the others as Rows.
  Result<std::vector<SourceRow>> PartitionRows(const TableSchema& table,
                                               const std::vector<std::vector<std::string>>& partition_keys) const override;
  // The schema version uuid (16 bytes) reported for the current catalog:
  // a name-based uuid of the keyspaces' and tables' definitions, the
  // node-local system_auth keyspace left out (nodes must agree on it).
  std::string SchemaVersion() const;

 private:
  Result<std::vector<SourceRow>> TabletRows(const TableSchema& table) const;  // tablet_tables.cc
  // system_traces.sessions / events (trace_tables.cc); `session_ids` (16
  // bytes each) null: every session.
  std::vector<SourceRow> TraceRows(const TableSchema& table, const std::vector<std::string>* session_ids) const;
  Result<std::vector<SourceRow>> LargePartitionRows(const TableSchema& table) const;
  Result<std::vector<SourceRow>> KeyAdviceRows(const TableSchema& table) const;
  std::vector<SourceRow> PeerRows(const TableSchema& table) const;
  std::vector<int64_t> LocalTokens() const;  // the cluster's answer, else node_.token
  // What system_schema lists: the catalog's keyspaces and tables, with the
  // system keyspaces (Cassandra's replication) and the virtual system and
  // system_schema tables this class answers.
  std::vector<KeyspaceMetadata> SchemaKeyspaces() const;
  std::vector<std::shared_ptr<const TableSchema>> SchemaTables(const std::string& keyspace) const;
  Coordinator* coordinator_;  // view builds
  Database* db_;              // coordinator_->database()
  NodeInfo node_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const TableSchema>> tables_;
  // SchemaVersion hashes the whole schema; it is read on every system.local
  // read and by the cluster's lease renewals, so the last hash is kept with
  // the catalog version it was computed at.
  mutable std::mutex version_mu_;
  mutable uint64_t version_of_ = UINT64_MAX;
  mutable std::string version_;
};

}  // namespace tessera::cql
