#include "cluster/replica_service.h"

#include <algorithm>

#include "db/database.h"

namespace tessera::cluster {

ReplicaService::ReplicaService(Database* db) : db_(db), paxos_(db->engine()) {}

Result<PaxosResponse> ReplicaService::Paxos(const PaxosRequest& request) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(request.table_uuid));
  Count(request.update.bytes() + request.partition.size());
  if (request.phase == PaxosRequest::Phase::kCommit) {
    db_->CountReplicaRequest(id, AbsoluteKey(id, request.partition), true);
  }
  return paxos_.Handle(id, request);
}

Status ReplicaService::Apply(const std::string& table_uuid, const WriteSet& relative_writes) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  Count(relative_writes.bytes());
  if (!relative_writes.empty()) {
    db_->CountReplicaRequest(id, AbsoluteKey(id, relative_writes.ops().front().key), true);
  }
  return ApplyLocal(db_->engine(), id, relative_writes);
}

Result<RangeBatch> ReplicaService::ReadRange(const RangeQuery& query) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(query.table_uuid));
  RangeQuery q = query;
  q.limit = std::max<uint32_t>(1, q.limit);
  db_->CountReplicaRequest(id, AbsoluteKey(id, q.from_end || q.from.empty() ? q.lower : q.from), false);
  TESSERA_ASSIGN_OR_RETURN(RangeBatch batch, ReadRangeLocal(db_->engine(), id, q));
  size_t bytes = 0;
  for (const auto& [k, v] : batch.entries) bytes += k.size() + v.size();
  Count(bytes);
  return batch;
}

Result<std::vector<std::optional<std::string>>> ReplicaService::ReadKeys(
    const std::string& table_uuid, const std::vector<std::string>& relative_keys) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  if (!relative_keys.empty()) db_->CountReplicaRequest(id, AbsoluteKey(id, relative_keys.front()), false);
  TESSERA_ASSIGN_OR_RETURN(auto values, ReadKeysLocal(db_->engine(), id, relative_keys));
  size_t bytes = 0;
  for (const auto& v : values) bytes += v ? v->size() : 0;
  Count(bytes);
  return values;
}

Result<RangeDigest> ReplicaService::Digest(const std::string& table_uuid, const std::string& lower,
                                           const std::string& upper) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  TESSERA_ASSIGN_OR_RETURN(RangeDigest digest, DigestLocal(db_->engine(), id, lower, upper));
  Count(16);
  return digest;
}

void ReplicaService::Count(size_t bytes) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

Result<uint32_t> ReplicaService::TableIdOf(const std::string& uuid) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ids_.find(uuid);
    if (it != ids_.end()) {
      auto t = db_->catalog().GetTableById(it->second);
      if (t && t->uuid == uuid) return it->second;
      ids_.erase(it);
    }
  }
  for (const auto& t : db_->catalog().AllTables()) {
    if (t->uuid != uuid) continue;
    std::lock_guard<std::mutex> lock(mu_);
    ids_[uuid] = t->id;
    return t->id;
  }
  return Status::NotFound("no table with this uuid on this node (its schema may not have arrived yet)");
}

}  // namespace tessera::cluster
