#include "cluster/internode_dispatch.h"

#include <optional>
#include <string>
#include <vector>

#include "cluster/internode_write_ops.h"
#include "cluster/replica_service.h"

namespace tessera::cluster {

namespace pb = tessera::internode;

int WireStatusCode(const Status& s) {
  if (s.ok()) return 0;
  if (s.IsInvalidArgument()) return 3;
  if (s.IsNotFound()) return 5;
  return 13;
}

std::string WireStatusMessage(const Status& s) {
  if (s.ok()) return std::string();
  return WireStatusCode(s) == 13 ? s.ToString() : s.message();
}

Status InternodeDispatch::Apply(const pb::ApplyRequest& request, TraceStepsProto* steps) {
  std::optional<tracing::ReplicaSteps> traced;
  if (request.trace() && steps) traced.emplace();
  Status s = replica_->Apply(request.table_uuid(), FromWriteOps(request.ops()), traced ? &*traced : nullptr);
  if (traced) ToTraceSteps(traced->events(), steps);
  return s;
}

Status InternodeDispatch::ReadRange(const pb::ReadRangeRequest& r, pb::ReadRangeReply* reply) {
  RangeQuery q;
  q.table_uuid = r.table_uuid();
  q.lower = r.lower();
  q.upper = r.upper();
  q.from = r.from();
  q.from_inclusive = r.from_inclusive();
  q.reverse = r.reverse();
  q.from_end = r.from_end();
  q.limit = r.limit();
  q.internal = r.internal();
  q.keys.assign(r.keys().begin(), r.keys().end());
  q.digest = r.digest();
  std::optional<tracing::ReplicaSteps> traced;
  if (r.trace()) traced.emplace();
  auto batch = replica_->ReadRange(q, traced ? &*traced : nullptr);
  if (traced) ToTraceSteps(traced->events(), reply->mutable_steps());
  if (!batch.ok()) return batch.status();
  for (auto& [k, v] : batch->entries) {
    pb::KeyValue* kv = reply->add_entries();
    kv->set_key(std::move(k));
    kv->set_value(std::move(v));
  }
  reply->set_more(batch->more);
  for (auto& v : batch->key_values) {
    reply->add_key_found(v.has_value());
    reply->add_key_values(v ? std::move(*v) : std::string());
  }
  if (batch->digest) reply->set_digest(std::move(*batch->digest));
  return Status::OK();
}

Status InternodeDispatch::ReadKeys(const pb::ReadKeysRequest& r, pb::ReadKeysReply* reply) {
  std::vector<std::string> keys(r.keys().begin(), r.keys().end());
  std::optional<tracing::ReplicaSteps> traced;
  if (r.trace()) traced.emplace();
  auto values = replica_->ReadKeys(r.table_uuid(), keys, r.digest(), traced ? &*traced : nullptr, r.internal());
  if (traced) ToTraceSteps(traced->events(), reply->mutable_steps());
  if (!values.ok()) return values.status();
  for (auto& v : *values) {
    reply->add_found(v.has_value());
    reply->add_values(v ? std::move(*v) : std::string());
  }
  return Status::OK();
}

Status InternodeDispatch::Digest(const pb::DigestRequest& r, pb::DigestReply* reply) {
  auto digest = replica_->Digest(r.table_uuid(), r.lower(), r.upper());
  if (!digest.ok()) return digest.status();
  reply->set_digest(digest->digest);
  reply->set_keys(digest->keys);
  return Status::OK();
}

Status InternodeDispatch::VectorSearch(const pb::VectorSearchRequest& r, pb::VectorSearchReply* reply) {
  VectorSearchQuery query;
  query.table_uuid = r.table_uuid();
  query.index = r.index();
  query.query.assign(r.query().begin(), r.query().end());
  query.k = r.k();
  for (int i = 0; i < r.lowers_size() && i < r.uppers_size(); ++i) query.ranges.emplace_back(r.lowers(i), r.uppers(i));
  auto keys = replica_->VectorSearch(query);
  if (!keys.ok()) return keys.status();
  for (auto& k : *keys) reply->add_keys(std::move(k));
  return Status::OK();
}

Status InternodeDispatch::Paxos(const pb::PaxosRequest& r, pb::PaxosReply* reply) {
  if (r.phase() < pb::PaxosRequest::PREPARE || r.phase() > pb::PaxosRequest::COMMIT) {
    return Status::InvalidArgument("unknown Paxos phase");
  }
  PaxosRequest request;
  request.phase = static_cast<PaxosRequest::Phase>(r.phase());
  request.table_uuid = r.table_uuid();
  request.partition = r.partition();
  request.ballot = r.ballot();
  request.update = FromWriteOps(r.update());
  auto response = replica_->Paxos(request);
  if (!response.ok()) return response.status();
  reply->set_ok(response->ok);
  reply->set_promised(response->promised);
  reply->set_accepted_ballot(response->accepted_ballot);
  ToWriteOps(response->accepted_update, reply->mutable_accepted_update());
  reply->set_committed_ballot(response->committed_ballot);
  ToWriteOps(response->committed_update, reply->mutable_committed_update());
  return Status::OK();
}

Status InternodeDispatch::LeadCounterWrite(const pb::CounterWriteRequest& r, pb::CounterWriteReply* reply) {
  auto shards = replica_->LeadCounterWrite(r.table_uuid(), FromWriteOps(r.ops()));
  if (!shards.ok()) return shards.status();
  ToWriteOps(*shards, reply->mutable_shards());
  return Status::OK();
}

Status InternodeDispatch::ExportPaxosState(const pb::PaxosStateRequest& r, pb::PaxosStateRows* reply) {
  auto rows = replica_->ExportPaxosState(r.table_uuid(), r.lower(), r.upper());
  if (!rows.ok()) return rows.status();
  for (auto& [k, v] : *rows) {
    pb::KeyValue* kv = reply->add_rows();
    kv->set_key(std::move(k));
    kv->set_value(std::move(v));
  }
  return Status::OK();
}

Status InternodeDispatch::ImportPaxosState(const pb::PaxosStateRows& r) {
  PaxosStateRows rows;
  for (const auto& kv : r.rows()) rows.emplace_back(kv.key(), kv.value());
  return replica_->ImportPaxosState(r.table_uuid(), rows);
}

void InternodeDispatch::StoreTrace(const pb::TraceSession& r) { replica_->StoreTrace(FromTraceSession(r)); }

void InternodeDispatch::Batch(const pb::BatchRequest& request, pb::BatchReply* reply) {
  auto set = [](pb::CallStatus* out, const Status& s) {
    out->set_code(WireStatusCode(s));
    out->set_message(WireStatusMessage(s));
  };
  for (const auto& apply : request.applies()) {
    pb::CallStatus* status = reply->add_applies();
    set(status, Apply(apply, status->mutable_steps()));
  }
  for (const auto& read : request.reads()) {
    pb::ReadKeysResult* result = reply->add_reads();
    set(result->mutable_status(), ReadKeys(read, result->mutable_reply()));
  }
}

}  // namespace tessera::cluster
