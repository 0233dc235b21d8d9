#include "cluster/replica_service.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "db/database.h"
#include "storage/counter_shards.h"
#include "tracing/trace_store.h"

namespace tessera::cluster {

ReplicaService::ReplicaService(Database* db, std::string self_host_id)
    : db_(db), self_host_id_(std::move(self_host_id)), paxos_(db->engine()) {}

Result<WriteSet> ReplicaService::LeadCounterWrite(const std::string& table_uuid, const WriteSet& relative_writes) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  if (self_host_id_.empty()) return Status::InvalidArgument("this node has no host id to lead counter increments");
  Count(relative_writes.bytes());
  TESSERA_RETURN_IF_ERROR(CheckPeerWrites(id, relative_writes));
  std::vector<std::string> keys;
  std::set<size_t> stripes;  // locked in order: no two leaders wait on each other
  for (const auto& op : relative_writes.ops()) {
    if (op.kind != WriteSet::Op::kMerge) continue;
    keys.push_back(op.key);
    stripes.insert(std::hash<std::string>{}(op.key) % kCounterStripes);
  }
  if (!keys.empty()) db_->CountReplicaRequest(id, AbsoluteKey(id, keys.front()), true, relative_writes.bytes());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (size_t s : stripes) locks.emplace_back(counter_stripes_[s]);
  TESSERA_ASSIGN_OR_RETURN(auto stored, ReadKeysLocal(db_->engine(), id, keys));
  // The rows as they will be once the ops before have been stored: a batch
  // may increment one cell twice.
  std::unordered_map<std::string, RowFragment> current;
  for (size_t i = 0; i < keys.size(); ++i) {
    RowFragment row;
    if (stored[i] && !stored[i]->empty() && (*stored[i])[0] == static_cast<char>(kValueTypeRowFragment)) {
      TESSERA_RETURN_IF_ERROR(DecodeRowFragment(*stored[i], &row));
    }
    current.emplace(keys[i], std::move(row));
  }
  WriteSet led;
  for (const auto& op : relative_writes.ops()) {
    if (op.kind != WriteSet::Op::kMerge) {
      led.DeleteRange(op.key, op.value);
      continue;
    }
    RowFragment increments;
    if (op.value.empty() || op.value[0] != static_cast<char>(kValueTypeRowFragment) ||
        !DecodeRowFragment(op.value, &increments).ok() || !HasCounterIncrements(increments)) {
      led.Merge(op.key, op.value);
      continue;
    }
    RowFragment& row = current[op.key];
    RowFragment shards = LeadCounterIncrements(row, std::move(increments), self_host_id_);
    ReconcileRow(&row, shards);
    std::string value;
    EncodeRowFragment(shards, &value);
    led.Merge(op.key, std::move(value));
  }
  TESSERA_RETURN_IF_ERROR(ApplyLocal(db_->engine(), id, led));
  return led;
}

Result<PaxosResponse> ReplicaService::Paxos(const PaxosRequest& request) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(request.table_uuid));
  Count(request.update.bytes() + request.partition.size());
  TESSERA_RETURN_IF_ERROR(CheckPeerWrites(id, request.update));  // what a commit applies
  if (request.phase == PaxosRequest::Phase::kCommit) {
    db_->CountReplicaRequest(id, AbsoluteKey(id, request.partition), true, request.update.bytes());
  }
  return paxos_.Handle(id, request);
}

Status ReplicaService::Apply(const std::string& table_uuid, const WriteSet& relative_writes,
                             tracing::ReplicaSteps* steps) {
  if (steps) steps->Event("MUTATION message received");
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  Count(relative_writes.bytes());
  TESSERA_RETURN_IF_ERROR(CheckPeerWrites(id, relative_writes));
  if (!relative_writes.empty()) {
    db_->CountReplicaRequest(id, AbsoluteKey(id, relative_writes.ops().front().key), true, relative_writes.bytes());
  }
  Status s = ApplyLocal(db_->engine(), id, relative_writes);
  if (steps) {
    steps->Event(s.ok() ? "Applied " + std::to_string(relative_writes.ops().size()) + " writes to the replica's store"
                        : "Writing to the replica's store failed: " + s.message());
  }
  return s;
}

Result<PaxosStateRows> ReplicaService::ExportPaxosState(const std::string& table_uuid, const std::string& lower,
                                                       const std::string& upper) {
  TESSERA_RETURN_IF_ERROR(TableIdOf(table_uuid).status());
  TESSERA_ASSIGN_OR_RETURN(PaxosStateRows rows, paxos_.Export(table_uuid, lower, upper));
  size_t bytes = 0;
  for (const auto& [k, v] : rows) bytes += k.size() + v.size();
  Count(bytes);
  return rows;
}

void ReplicaService::StoreTrace(tracing::TraceSessionRecord session) {
  if (traces_ != nullptr) traces_->Add(std::move(session));
}

Status ReplicaService::ImportPaxosState(const std::string& table_uuid, const PaxosStateRows& rows) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  size_t bytes = 0;
  for (const auto& [k, v] : rows) bytes += k.size() + v.size();
  Count(bytes);
  // Every row first: a proposal imported here may be committed by a later
  // round, so its update passes the same check as any write from a peer.
  for (const auto& [partition, row] : rows) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<WriteSet> updates, PaxosStore::UpdatesOfRow(row));
    for (const WriteSet& update : updates) TESSERA_RETURN_IF_ERROR(CheckPeerWrites(id, update));
  }
  return paxos_.Import(table_uuid, rows);
}

Result<size_t> ReplicaService::PrunePaxosState(int64_t now_micros) {
  std::map<std::string, int32_t> gc_grace;
  for (const auto& t : db_->catalog().AllTables()) gc_grace[t->uuid] = t->options.gc_grace_seconds;
  return paxos_.Prune(
      [&](const std::string& uuid) -> std::optional<int32_t> {
        auto it = gc_grace.find(uuid);
        if (it == gc_grace.end()) return std::nullopt;
        return it->second;
      },
      now_micros);
}

Result<RangeBatch> ReplicaService::ReadRange(const RangeQuery& query, tracing::ReplicaSteps* steps) {
  if (steps) steps->Event("RANGE message received");
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(query.table_uuid));
  RangeQuery q = query;
  q.limit = std::max<uint32_t>(1, q.limit);
  if (!q.internal) db_->CountReplicaRequest(id, AbsoluteKey(id, q.from_end || q.from.empty() ? q.lower : q.from), false);
  TESSERA_ASSIGN_OR_RETURN(RangeBatch batch, ReadRangeLocal(db_->engine(), id, q));
  const size_t keys_read = batch.entries.size();
  size_t bytes = 0;
  if (q.digest) {
    batch.digest = WindowDigest(batch);
    batch.entries.clear();
    batch.key_values.clear();
    bytes = batch.digest->size();
  }
  for (const auto& [k, v] : batch.entries) bytes += k.size() + v.size();
  for (const auto& v : batch.key_values) bytes += v ? v->size() : 0;
  Count(bytes);
  if (steps) {
    steps->Event(std::string(q.digest ? "Digest of " : "Read ") + std::to_string(keys_read) +
                 (keys_read == 1 ? " key" : " keys") + " of a range" +
                 (q.keys.empty() ? std::string()
                                : " and " + std::to_string(q.keys.size()) + (q.keys.size() == 1 ? " point key" : " point keys")) +
                 " from the replica's store");
  }
  return batch;
}

Result<std::vector<std::optional<std::string>>> ReplicaService::ReadKeys(
    const std::string& table_uuid, const std::vector<std::string>& relative_keys, bool digest,
    tracing::ReplicaSteps* steps, bool internal) {
  if (steps) steps->Event(digest ? "DIGEST message received" : "READ message received");
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  if (!relative_keys.empty() && !internal) db_->CountReplicaRequest(id, AbsoluteKey(id, relative_keys.front()), false);
  TESSERA_ASSIGN_OR_RETURN(auto values, ReadKeysLocal(db_->engine(), id, relative_keys));
  size_t bytes = 0;
  for (auto& v : values) {
    if (v && digest) v = ValueDigest(*v);
    bytes += v ? v->size() : 0;
  }
  Count(bytes);
  if (steps) {
    steps->Event(std::string(digest ? "Digests of " : "Read ") + std::to_string(relative_keys.size()) +
                 (relative_keys.size() == 1 ? " key" : " keys") + " from the replica's store");
  }
  return values;
}

Result<RangeDigest> ReplicaService::Digest(const std::string& table_uuid, const std::string& lower,
                                           const std::string& upper) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(table_uuid));
  TESSERA_ASSIGN_OR_RETURN(RangeDigest digest, DigestLocal(db_->engine(), id, lower, upper));
  Count(16);
  return digest;
}

Result<std::vector<std::string>> ReplicaService::VectorSearch(const VectorSearchQuery& query) {
  TESSERA_ASSIGN_OR_RETURN(uint32_t id, TableIdOf(query.table_uuid));
  std::shared_ptr<const TableSchema> table = db_->catalog().GetTableById(id);
  if (!table) return Status::NotFound("no table " + std::to_string(id));
  std::vector<std::pair<std::string, std::string>> ranges;
  for (const auto& [lower, upper] : query.ranges) ranges.emplace_back(AbsoluteKey(id, lower), AbsoluteEnd(id, upper));
  TESSERA_ASSIGN_OR_RETURN(auto candidates, db_->SearchVectorIndex(*table, query.index, query.query, query.k, ranges));
  std::vector<std::string> keys;
  for (const VectorCandidate& c : candidates) {
    if (auto relative = RelativeKey(id, c.storage_key)) keys.push_back(std::move(*relative));
  }
  Count(query.query.size() * 4);
  vector_searches_.fetch_add(1, std::memory_order_relaxed);
  return keys;
}

Status ReplicaService::CheckPeerWrites(uint32_t table_id, const WriteSet& relative_writes) {
  if (relative_writes.empty()) return Status::OK();
  std::shared_ptr<const TableSchema> table = db_->catalog().GetTableById(table_id);
  if (!table) return Status::NotFound("no table " + std::to_string(table_id));
  return CheckWrites(*table, relative_writes);
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
