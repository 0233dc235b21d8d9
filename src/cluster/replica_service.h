// ReplicaService: what this node serves to the coordinators of other nodes,
// in plain values — apply a write set, read a key range or keys, digest a
// range for repair, run a phase of Paxos — over the tablets it holds, tables named by uuid
// (mapped to this node's table ids; a table this node does not know yet is
// NotFound, so the coordinator counts no answer from it). Keys are
// table-relative (cluster/replica_reads.h).
//
// Transports deliver requests to it: the gRPC listener
// (cluster/internode_service.h) and, in tests, the in-process network
// (cluster/in_memory_network.h). It also counts the requests it served and
// the bytes of their payloads (writes and values returned), for /metrics.
//
// Errors: NotFound (unknown table), those of the storage engine.
// Thread safety: thread-safe.
#pragma once

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

namespace tessera {
class Database;
}

namespace tessera::cluster {

class ReplicaService {
 public:
  // REQUIRES: db outlives this object.
  explicit ReplicaService(Database* db);

  [[nodiscard]] Status Apply(const std::string& table_uuid, const WriteSet& relative_writes);
  Result<RangeBatch> ReadRange(const RangeQuery& query);
  Result<std::vector<std::optional<std::string>>> ReadKeys(const std::string& table_uuid,
                                                           const std::vector<std::string>& relative_keys);
  Result<RangeDigest> Digest(const std::string& table_uuid, const std::string& lower, const std::string& upper);
  // One phase of a Paxos round on a partition this node holds (cluster/paxos_state.h).
  Result<PaxosResponse> Paxos(const PaxosRequest& request);

  uint64_t requests_served() const { return requests_.load(); }
  uint64_t bytes_served() const { return bytes_.load(); }

 private:
  // This node's id of the table with `uuid`; ids never change for a uuid.
  Result<uint32_t> TableIdOf(const std::string& uuid);
  void Count(size_t bytes);

  Database* db_;
  PaxosStore paxos_;
  std::mutex mu_;
  std::map<std::string, uint32_t> ids_;  // guarded by mu_
  std::atomic<uint64_t> requests_{0}, bytes_{0};
};

}  // namespace tessera::cluster
