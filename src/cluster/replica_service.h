// ReplicaService: what this node serves to the coordinators of other nodes,
// in plain values — apply a write set, read a key range or keys, digest a
// range for repair, run a phase of Paxos, lead counter increments — over the
// tablets it holds, tables named by uuid
// (mapped to this node's table ids; a table this node does not know yet is
// NotFound, so the coordinator counts no answer from it). Keys are
// table-relative (cluster/replica_reads.h).
//
// Transports deliver requests to it: the gRPC listener
// (cluster/internode_service.h) and, in tests, the in-process network
// (cluster/in_memory_network.h). It also counts the requests it served and
// the bytes of their payloads (writes and values returned), for /metrics.
//
// Writes (Apply, a Paxos proposal or commit, counter increments, the
// updates of imported Paxos state) are checked
// before any is applied (CheckWrites, replica_reads.h): a key that is not a
// row of the table, or a value that does not decode as what its key holds,
// is refused with InvalidArgument, so no peer's bytes make a key unreadable.
//
// Errors: NotFound (unknown table), InvalidArgument (a write refused), those
// of the storage engine.
// Thread safety: thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/paxos_state.h"
#include "cluster/replica_reads.h"
#include "common/status.h"
#include "storage/storage_engine.h"
#include "tracing/trace_session.h"

namespace tessera::tracing {
class TraceStore;
}

namespace tessera {
class Database;
}

namespace tessera::cluster {

class ReplicaService {
 public:
  // REQUIRES: db outlives this object. `self_host_id` (16 bytes): this
  // node's, the id of the counter shards it leads (empty: it leads none).
  explicit ReplicaService(Database* db, std::string self_host_id = {});

  // `steps` (set for a traced request): what the replica does, for the
  // coordinator's trace (tracing/trace_session.h ReplicaSteps).
  [[nodiscard]] Status Apply(const std::string& table_uuid, const WriteSet& relative_writes,
                             tracing::ReplicaSteps* steps = nullptr);
  Result<RangeBatch> ReadRange(const RangeQuery& query, tracing::ReplicaSteps* steps = nullptr);
  // `digest`: each found value replaced by its ValueDigest (replica_reads.h).
  // `internal`: not counted as a request served (RangeQuery::internal).
  Result<std::vector<std::optional<std::string>>> ReadKeys(const std::string& table_uuid,
                                                           const std::vector<std::string>& relative_keys,
                                                           bool digest = false,
                                                           tracing::ReplicaSteps* steps = nullptr,
                                                           bool internal = false);
  Result<RangeDigest> Digest(const std::string& table_uuid, const std::string& lower, const std::string& upper);
  // The table-relative storage keys of the query's k nearest rows this node
  // stores in its ranges, nearest first (Database::SearchVectorIndex).
  // Errors: NotFound (unknown table or index), those of the search.
  Result<std::vector<std::string>> VectorSearch(const VectorSearchQuery& query);
  // One phase of a Paxos round on a partition this node holds (cluster/paxos_state.h).
  Result<PaxosResponse> Paxos(const PaxosRequest& request);
  // Leads the counter increments of `relative_writes` (storage/counter_shards.h):
  // turns each into this node's next shard of its cell, stores the result
  // and returns it, for the coordinator to send to the other replicas.
  // Increments of one key are led one at a time (a lock stripe per key
  // hash), each after the last is stored. Ops without increments are
  // stored and returned as they are. Errors: NotFound (unknown table),
  // InvalidArgument (no host id), the storage engine's.
  Result<WriteSet> LeadCounterWrite(const std::string& table_uuid, const WriteSet& relative_writes);
  // The Paxos state of the partitions of [lower, upper) (PaxosStore::Export),
  // and the merge of such rows into this node's (PaxosStore::Import): what a
  // tablet migration carries to a new replica. An import is checked whole
  // first (each row decodes, its updates pass CheckWrites): InvalidArgument
  // and nothing imported otherwise.
  Result<PaxosStateRows> ExportPaxosState(const std::string& table_uuid, const std::string& lower,
                                          const std::string& upper);
  [[nodiscard]] Status ImportPaxosState(const std::string& table_uuid, const PaxosStateRows& rows);
  // Prunes this node's Paxos state (PaxosStore::Prune) against the tables
  // of the catalog; `now_micros` since the epoch. Returns the rows removed.
  Result<size_t> PrunePaxosState(int64_t now_micros);
  // This node's Paxos state, every row (system.paxos).
  Result<std::vector<PaxosStore::Row>> PaxosRows() { return paxos_.Rows(); }
  // Holds a trace session another node coordinated (TraceStore::Add), so
  // that this node's system_traces lists it; dropped without a trace store.
  void StoreTrace(tracing::TraceSessionRecord session);
  // Where StoreTrace puts sessions. REQUIRES: set before serving; outlives this object.
  void set_trace_store(tracing::TraceStore* traces) { traces_ = traces; }

  uint64_t requests_served() const { return requests_.load(); }
  uint64_t bytes_served() const { return bytes_.load(); }
  // VectorSearch requests answered (also counted in requests_served).
  uint64_t vector_searches_served() const { return vector_searches_.load(); }

 private:
  // This node's id of the table with `uuid`; ids never change for a uuid.
  Result<uint32_t> TableIdOf(const std::string& uuid);
  // CheckWrites (replica_reads.h) against the table's schema: what every
  // write another node sends passes before it is applied or promised.
  [[nodiscard]] Status CheckPeerWrites(uint32_t table_id, const WriteSet& relative_writes);
  void Count(size_t bytes);

  Database* db_;
  const std::string self_host_id_;
  tracing::TraceStore* traces_ = nullptr;
  PaxosStore paxos_;
  static constexpr size_t kCounterStripes = 64;
  std::array<std::mutex, kCounterStripes> counter_stripes_;  // LeadCounterWrite's, by key hash
  std::mutex mu_;
  std::map<std::string, uint32_t> ids_;  // guarded by mu_
  std::atomic<uint64_t> requests_{0}, bytes_{0}, vector_searches_{0};
};

}  // namespace tessera::cluster
