#include "cluster/internode_service.h"

#include <chrono>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "cluster/replica_service.h"
#include "cluster/internode_trace.h"
#include "cluster/internode_write_ops.h"
#include "internode.grpc.pb.h"

namespace tessera::cluster {
namespace {

namespace pb = tessera::internode;

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  if (s.IsNotFound()) return grpc::Status(grpc::StatusCode::NOT_FOUND, s.message());
  if (s.IsInvalidArgument()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, s.message());
  return grpc::Status(grpc::StatusCode::INTERNAL, s.ToString());
}

// The synchronous handlers below, answered through gRPC's callback API: each
// runs inline on the gRPC thread that read the request and finishes there
// (a memtable write or a short read). The synchronous server handed every
// call from a polling thread to a worker of its thread manager and back.
class Service final : public pb::Internode::CallbackService {
 public:
  explicit Service(ReplicaService* replica) : replica_(replica) {}

  grpc::ServerUnaryReactor* Apply(grpc::CallbackServerContext* context, const pb::ApplyRequest* request,
                                  pb::ApplyReply* reply) override {
    return Finish(context, DoApply(request, reply->mutable_steps()));
  }
  grpc::ServerUnaryReactor* ReadRange(grpc::CallbackServerContext* context, const pb::ReadRangeRequest* request,
                                      pb::ReadRangeReply* reply) override {
    return Finish(context, DoReadRange(request, reply));
  }
  grpc::ServerUnaryReactor* ReadKeys(grpc::CallbackServerContext* context, const pb::ReadKeysRequest* request,
                                     pb::ReadKeysReply* reply) override {
    return Finish(context, DoReadKeys(request, reply));
  }
  grpc::ServerUnaryReactor* Digest(grpc::CallbackServerContext* context, const pb::DigestRequest* request,
                                   pb::DigestReply* reply) override {
    return Finish(context, DoDigest(request, reply));
  }
  grpc::ServerUnaryReactor* VectorSearch(grpc::CallbackServerContext* context, const pb::VectorSearchRequest* request,
                                         pb::VectorSearchReply* reply) override {
    return Finish(context, DoVectorSearch(request, reply));
  }
  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context, const pb::PingRequest*,
                                 pb::PingReply*) override {
    return Finish(context, grpc::Status::OK);
  }
  grpc::ServerUnaryReactor* Paxos(grpc::CallbackServerContext* context, const pb::PaxosRequest* request,
                                  pb::PaxosReply* reply) override {
    return Finish(context, DoPaxos(request, reply));
  }
  grpc::ServerUnaryReactor* LeadCounterWrite(grpc::CallbackServerContext* context,
                                             const pb::CounterWriteRequest* request,
                                             pb::CounterWriteReply* reply) override {
    auto shards = replica_->LeadCounterWrite(request->table_uuid(), FromWriteOps(request->ops()));
    if (shards.ok()) ToWriteOps(*shards, reply->mutable_shards());
    return Finish(context, shards.ok() ? grpc::Status::OK : ToGrpc(shards.status()));
  }
  grpc::ServerUnaryReactor* ExportPaxosState(grpc::CallbackServerContext* context,
                                             const pb::PaxosStateRequest* request,
                                             pb::PaxosStateRows* reply) override {
    auto rows = replica_->ExportPaxosState(request->table_uuid(), request->lower(), request->upper());
    if (rows.ok()) {
      for (auto& [k, v] : *rows) {
        pb::KeyValue* kv = reply->add_rows();
        kv->set_key(std::move(k));
        kv->set_value(std::move(v));
      }
    }
    return Finish(context, rows.ok() ? grpc::Status::OK : ToGrpc(rows.status()));
  }
  grpc::ServerUnaryReactor* ImportPaxosState(grpc::CallbackServerContext* context, const pb::PaxosStateRows* request,
                                             pb::ImportPaxosStateReply*) override {
    PaxosStateRows rows;
    for (const auto& kv : request->rows()) rows.emplace_back(kv.key(), kv.value());
    return Finish(context, ToGrpc(replica_->ImportPaxosState(request->table_uuid(), rows)));
  }
  grpc::ServerUnaryReactor* StoreTrace(grpc::CallbackServerContext* context, const pb::TraceSession* request,
                                       pb::StoreTraceReply*) override {
    replica_->StoreTrace(FromTraceSession(*request));
    return Finish(context, grpc::Status::OK);
  }
  // Each request of the batch answers as its own call would.
  grpc::ServerUnaryReactor* Batch(grpc::CallbackServerContext* context, const pb::BatchRequest* request,
                                  pb::BatchReply* reply) override {
    auto set = [](pb::CallStatus* out, const grpc::Status& s) {
      out->set_code(static_cast<int32_t>(s.error_code()));
      if (!s.ok()) out->set_message(s.error_message());
    };
    for (const auto& apply : request->applies()) {
      pb::CallStatus* status = reply->add_applies();
      set(status, DoApply(&apply, status->mutable_steps()));
    }
    for (const auto& read : request->reads()) {
      pb::ReadKeysResult* result = reply->add_reads();
      set(result->mutable_status(), DoReadKeys(&read, result->mutable_reply()));
    }
    return Finish(context, grpc::Status::OK);
  }

 private:
  static grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context, grpc::Status status) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(std::move(status));
    return reactor;
  }

  // `steps`: where a traced request's steps go (null: nowhere).
  grpc::Status DoApply(const pb::ApplyRequest* request, TraceStepsProto* steps) {
    std::optional<tracing::ReplicaSteps> traced;
    if (request->trace() && steps) traced.emplace();
    grpc::Status s = ToGrpc(replica_->Apply(request->table_uuid(), FromWriteOps(request->ops()),
                                            traced ? &*traced : nullptr));
    if (traced) ToTraceSteps(traced->events(), steps);
    return s;
  }

  grpc::Status DoPaxos(const pb::PaxosRequest* r, pb::PaxosReply* reply) {
    PaxosRequest request;
    if (r->phase() < pb::PaxosRequest::PREPARE || r->phase() > pb::PaxosRequest::COMMIT) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unknown Paxos phase");
    }
    request.phase = static_cast<PaxosRequest::Phase>(r->phase());
    request.table_uuid = r->table_uuid();
    request.partition = r->partition();
    request.ballot = r->ballot();
    request.update = FromWriteOps(r->update());
    auto response = replica_->Paxos(request);
    if (!response.ok()) return ToGrpc(response.status());
    reply->set_ok(response->ok);
    reply->set_promised(response->promised);
    reply->set_accepted_ballot(response->accepted_ballot);
    ToWriteOps(response->accepted_update, reply->mutable_accepted_update());
    reply->set_committed_ballot(response->committed_ballot);
    ToWriteOps(response->committed_update, reply->mutable_committed_update());
    return grpc::Status::OK;
  }

  grpc::Status DoReadRange(const pb::ReadRangeRequest* r, pb::ReadRangeReply* reply) {
    RangeQuery q;
    q.table_uuid = r->table_uuid();
    q.lower = r->lower();
    q.upper = r->upper();
    q.from = r->from();
    q.from_inclusive = r->from_inclusive();
    q.reverse = r->reverse();
    q.from_end = r->from_end();
    q.limit = r->limit();
    q.internal = r->internal();
    q.keys.assign(r->keys().begin(), r->keys().end());
    q.digest = r->digest();
    std::optional<tracing::ReplicaSteps> traced;
    if (r->trace()) traced.emplace();
    auto batch = replica_->ReadRange(q, traced ? &*traced : nullptr);
    if (traced) ToTraceSteps(traced->events(), reply->mutable_steps());
    if (!batch.ok()) return ToGrpc(batch.status());
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
    return grpc::Status::OK;
  }

  grpc::Status DoReadKeys(const pb::ReadKeysRequest* r, pb::ReadKeysReply* reply) {
    std::vector<std::string> keys(r->keys().begin(), r->keys().end());
    std::optional<tracing::ReplicaSteps> traced;
    if (r->trace()) traced.emplace();
    auto values = replica_->ReadKeys(r->table_uuid(), keys, r->digest(), traced ? &*traced : nullptr, r->internal());
    if (traced) ToTraceSteps(traced->events(), reply->mutable_steps());
    if (!values.ok()) return ToGrpc(values.status());
    for (auto& v : *values) {
      reply->add_found(v.has_value());
      reply->add_values(v ? std::move(*v) : std::string());
    }
    return grpc::Status::OK;
  }

  grpc::Status DoVectorSearch(const pb::VectorSearchRequest* r, pb::VectorSearchReply* reply) {
    VectorSearchQuery query;
    query.table_uuid = r->table_uuid();
    query.index = r->index();
    query.query.assign(r->query().begin(), r->query().end());
    query.k = r->k();
    for (int i = 0; i < r->lowers_size() && i < r->uppers_size(); ++i) query.ranges.emplace_back(r->lowers(i), r->uppers(i));
    auto keys = replica_->VectorSearch(query);
    if (!keys.ok()) return ToGrpc(keys.status());
    for (auto& k : *keys) reply->add_keys(std::move(k));
    return grpc::Status::OK;
  }

  grpc::Status DoDigest(const pb::DigestRequest* r, pb::DigestReply* reply) {
    auto digest = replica_->Digest(r->table_uuid(), r->lower(), r->upper());
    if (!digest.ok()) return ToGrpc(digest.status());
    reply->set_digest(digest->digest);
    reply->set_keys(digest->keys);
    return grpc::Status::OK;
  }

  ReplicaService* replica_;
};

}  // namespace

struct InternodeServer::Impl {
  explicit Impl(ReplicaService* replica) : service(replica) {}
  Service service;
  std::unique_ptr<grpc::Server> server;
};

InternodeServer::InternodeServer(ReplicaService* replica) : impl_(std::make_unique<Impl>(replica)) {}
InternodeServer::~InternodeServer() { Stop(); }

Status InternodeServer::Start(const std::string& address, uint16_t port, const InternodeTlsMaterial* tls) {
  grpc::ServerBuilder builder;
  int bound = 0;
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls != nullptr) {
    grpc::SslServerCredentialsOptions ssl(tls->require_client_auth
                                              ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                              : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    ssl.pem_root_certs = tls->ca;
    ssl.pem_key_cert_pairs.push_back({tls->private_key, tls->certificate});
    credentials = grpc::SslServerCredentials(ssl);
  }
  builder.AddListeningPort(address + ":" + std::to_string(port), credentials, &bound);
  builder.RegisterService(&impl_->service);
  builder.SetMaxReceiveMessageSize(256 << 20);
  builder.SetMaxSendMessageSize(256 << 20);
  // Peers send keepalive pings every second (internode_client.cc): allow
  // them, instead of gRPC's default answer to frequent pings (GOAWAY).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || bound == 0) {
    impl_->server.reset();
    return Status::IOError("cannot listen for internode requests on " + address + ":" + std::to_string(port));
  }
  port_ = static_cast<uint16_t>(bound);
  return Status::OK();
}

void InternodeServer::Stop() {
  if (!impl_ || !impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server->Wait();
  impl_->server.reset();
}

}  // namespace tessera::cluster
