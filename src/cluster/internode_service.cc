#include "cluster/internode_service.h"

#include <chrono>

#include <grpcpp/grpcpp.h>

#include "cluster/internode_dispatch.h"
#include "internode.grpc.pb.h"

namespace tessera::cluster {
namespace {

namespace pb = tessera::internode;

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(WireStatusCode(s)), WireStatusMessage(s));
}

// Each call served by InternodeDispatch, answered through gRPC's callback
// API: each runs inline on the gRPC thread that read the request and
// finishes there (a memtable write or a short read). The synchronous server
// handed every call from a polling thread to a worker of its thread manager.
class Service final : public pb::Internode::CallbackService {
 public:
  explicit Service(ReplicaService* replica) : dispatch_(replica) {}

  grpc::ServerUnaryReactor* Apply(grpc::CallbackServerContext* context, const pb::ApplyRequest* request,
                                  pb::ApplyReply* reply) override {
    return Finish(context, dispatch_.Apply(*request, reply->mutable_steps()));
  }
  grpc::ServerUnaryReactor* ReadRange(grpc::CallbackServerContext* context, const pb::ReadRangeRequest* request,
                                      pb::ReadRangeReply* reply) override {
    return Finish(context, dispatch_.ReadRange(*request, reply));
  }
  grpc::ServerUnaryReactor* ReadKeys(grpc::CallbackServerContext* context, const pb::ReadKeysRequest* request,
                                     pb::ReadKeysReply* reply) override {
    return Finish(context, dispatch_.ReadKeys(*request, reply));
  }
  grpc::ServerUnaryReactor* Digest(grpc::CallbackServerContext* context, const pb::DigestRequest* request,
                                   pb::DigestReply* reply) override {
    return Finish(context, dispatch_.Digest(*request, reply));
  }
  grpc::ServerUnaryReactor* VectorSearch(grpc::CallbackServerContext* context, const pb::VectorSearchRequest* request,
                                         pb::VectorSearchReply* reply) override {
    return Finish(context, dispatch_.VectorSearch(*request, reply));
  }
  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context, const pb::PingRequest*,
                                 pb::PingReply*) override {
    return Finish(context, Status::OK());
  }
  grpc::ServerUnaryReactor* Paxos(grpc::CallbackServerContext* context, const pb::PaxosRequest* request,
                                  pb::PaxosReply* reply) override {
    return Finish(context, dispatch_.Paxos(*request, reply));
  }
  grpc::ServerUnaryReactor* LeadCounterWrite(grpc::CallbackServerContext* context,
                                             const pb::CounterWriteRequest* request,
                                             pb::CounterWriteReply* reply) override {
    return Finish(context, dispatch_.LeadCounterWrite(*request, reply));
  }
  grpc::ServerUnaryReactor* ExportPaxosState(grpc::CallbackServerContext* context,
                                             const pb::PaxosStateRequest* request,
                                             pb::PaxosStateRows* reply) override {
    return Finish(context, dispatch_.ExportPaxosState(*request, reply));
  }
  grpc::ServerUnaryReactor* ImportPaxosState(grpc::CallbackServerContext* context, const pb::PaxosStateRows* request,
                                             pb::ImportPaxosStateReply*) override {
    return Finish(context, dispatch_.ImportPaxosState(*request));
  }
  grpc::ServerUnaryReactor* StoreTrace(grpc::CallbackServerContext* context, const pb::TraceSession* request,
                                       pb::StoreTraceReply*) override {
    dispatch_.StoreTrace(*request);
    return Finish(context, Status::OK());
  }
  grpc::ServerUnaryReactor* Batch(grpc::CallbackServerContext* context, const pb::BatchRequest* request,
                                  pb::BatchReply* reply) override {
    dispatch_.Batch(*request, reply);
    return Finish(context, Status::OK());
  }

 private:
  static grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context, const Status& status) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(ToGrpc(status));
    return reactor;
  }

  InternodeDispatch dispatch_;
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
