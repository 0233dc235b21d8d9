#include "cluster/internode_client.h"

#include <atomic>
#include <chrono>

#include <grpcpp/grpcpp.h>

#include "internode.grpc.pb.h"

namespace tessera::cluster {
namespace {

namespace pb = tessera::internode;

Status FromGrpc(const grpc::Status& s, const std::string& target) {
  if (s.ok()) return Status::OK();
  const std::string what = target + ": " + s.error_message();
  switch (s.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED: return Status::Busy("timed out waiting for " + what);
    case grpc::StatusCode::NOT_FOUND: return Status::NotFound(what);
    case grpc::StatusCode::INVALID_ARGUMENT: return Status::InvalidArgument(what);
    default: return Status::IOError(what);
  }
}

// One call in flight: everything gRPC needs alive until the callback.
template <typename Request, typename Reply>
struct Call {
  grpc::ClientContext context;
  Request request;
  Reply reply;
};

void SetDeadline(grpc::ClientContext* context, int64_t timeout_micros) {
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::microseconds(timeout_micros));
}

}  // namespace

struct InternodeClient::Impl {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<pb::Internode::Stub>> stubs;
  std::atomic<uint64_t> requests{0}, bytes{0};

  std::shared_ptr<pb::Internode::Stub> StubFor(const std::string& target) {
    std::lock_guard<std::mutex> lock(mu);
    auto& stub = stubs[target];
    if (!stub) {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
      args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
      args.SetMaxReceiveMessageSize(256 << 20);
      args.SetMaxSendMessageSize(256 << 20);
      stub = pb::Internode::NewStub(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    }
    return stub;
  }
  void Count(size_t payload) {
    ++requests;
    bytes += payload;
  }
};

InternodeClient::InternodeClient() : impl_(std::make_unique<Impl>()) {}
InternodeClient::~InternodeClient() = default;

uint64_t InternodeClient::requests_sent() const { return impl_->requests.load(); }
uint64_t InternodeClient::bytes_sent() const { return impl_->bytes.load(); }

void InternodeClient::Apply(const std::string& target, const std::string& table_uuid, const WriteSet& writes,
                            int64_t timeout_micros, std::function<void(Status)> done) {
  auto* call = new Call<pb::ApplyRequest, pb::ApplyReply>();
  call->request.set_table_uuid(table_uuid);
  for (const auto& op : writes.ops()) {
    pb::WriteOp* w = call->request.add_ops();
    w->set_kind(op.kind == WriteSet::Op::kMerge ? pb::WriteOp::MERGE : pb::WriteOp::DELETE_RANGE);
    w->set_key(op.key);
    w->set_value(op.value);
  }
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(writes.bytes());
  auto stub = impl_->StubFor(target);
  stub->async()->Apply(&call->context, &call->request, &call->reply,
                       [call, target, done = std::move(done)](grpc::Status s) {
                         std::unique_ptr<Call<pb::ApplyRequest, pb::ApplyReply>> owned(call);
                         done(FromGrpc(s, target));
                       });
}

void InternodeClient::ReadRange(const std::string& target, const RangeQuery& q, int64_t timeout_micros,
                                std::function<void(Result<RangeBatch>)> done) {
  auto* call = new Call<pb::ReadRangeRequest, pb::ReadRangeReply>();
  call->request.set_table_uuid(q.table_uuid);
  call->request.set_lower(q.lower);
  call->request.set_upper(q.upper);
  call->request.set_from(q.from);
  call->request.set_from_inclusive(q.from_inclusive);
  call->request.set_reverse(q.reverse);
  call->request.set_limit(q.limit);
  call->request.set_from_end(q.from_end);
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(q.from.size() + q.lower.size() + q.upper.size());
  auto stub = impl_->StubFor(target);
  stub->async()->ReadRange(&call->context, &call->request, &call->reply,
                           [call, target, done = std::move(done)](grpc::Status s) {
                             std::unique_ptr<Call<pb::ReadRangeRequest, pb::ReadRangeReply>> owned(call);
                             Status status = FromGrpc(s, target);
                             if (!status.ok()) return done(status);
                             RangeBatch batch;
                             batch.more = call->reply.more();
                             for (auto& e : *call->reply.mutable_entries()) {
                               batch.entries.emplace_back(std::move(*e.mutable_key()), std::move(*e.mutable_value()));
                             }
                             done(std::move(batch));
                           });
}

void InternodeClient::ReadKeys(const std::string& target, const std::string& table_uuid,
                               const std::vector<std::string>& keys, int64_t timeout_micros,
                               std::function<void(Result<std::vector<std::optional<std::string>>>)> done) {
  auto* call = new Call<pb::ReadKeysRequest, pb::ReadKeysReply>();
  call->request.set_table_uuid(table_uuid);
  size_t bytes = 0;
  for (const auto& k : keys) {
    call->request.add_keys(k);
    bytes += k.size();
  }
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(bytes);
  auto stub = impl_->StubFor(target);
  const size_t asked = keys.size();
  stub->async()->ReadKeys(&call->context, &call->request, &call->reply,
                          [call, target, asked, done = std::move(done)](grpc::Status s) {
                            std::unique_ptr<Call<pb::ReadKeysRequest, pb::ReadKeysReply>> owned(call);
                            Status status = FromGrpc(s, target);
                            if (!status.ok()) return done(status);
                            const auto& r = call->reply;
                            if (static_cast<size_t>(r.found_size()) != asked ||
                                static_cast<size_t>(r.values_size()) != asked) {
                              return done(Status::Corruption(target + " answered a different number of keys"));
                            }
                            std::vector<std::optional<std::string>> values(asked);
                            for (size_t i = 0; i < asked; ++i) {
                              if (r.found(static_cast<int>(i))) values[i] = r.values(static_cast<int>(i));
                            }
                            done(std::move(values));
                          });
}

void InternodeClient::Digest(const std::string& target, const std::string& table_uuid, const std::string& lower,
                             const std::string& upper, int64_t timeout_micros,
                             std::function<void(Result<RangeDigest>)> done) {
  auto* call = new Call<pb::DigestRequest, pb::DigestReply>();
  call->request.set_table_uuid(table_uuid);
  call->request.set_lower(lower);
  call->request.set_upper(upper);
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(lower.size() + upper.size());
  auto stub = impl_->StubFor(target);
  stub->async()->Digest(&call->context, &call->request, &call->reply,
                        [call, target, done = std::move(done)](grpc::Status s) {
                          std::unique_ptr<Call<pb::DigestRequest, pb::DigestReply>> owned(call);
                          Status status = FromGrpc(s, target);
                          if (!status.ok()) return done(status);
                          done(RangeDigest{call->reply.digest(), call->reply.keys()});
                        });
}

}  // namespace tessera::cluster
