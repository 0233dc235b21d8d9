#include "cluster/internode_client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iterator>

#include <grpcpp/grpcpp.h>

#include "cluster/internode_trace.h"
#include "cluster/internode_write_ops.h"
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

std::chrono::system_clock::time_point DeadlineIn(int64_t timeout_micros) {
  return std::chrono::system_clock::now() + std::chrono::microseconds(timeout_micros);
}

void SetDeadline(grpc::ClientContext* context, int64_t timeout_micros) { context->set_deadline(DeadlineIn(timeout_micros)); }

// An Apply or ReadKeys waiting for its node's lane (see Impl::Submit).
struct Queued {
  std::optional<pb::ApplyRequest> apply;  // else `read`
  pb::ReadKeysRequest read;  // moved into the message that carries it
  size_t keys_asked = 0;
  std::shared_ptr<tracing::TraceSession> trace;  // a traced request's: the replica's steps go there
  std::chrono::system_clock::time_point deadline;
  std::function<void(Status)> apply_done;
  std::function<void(Result<std::vector<std::optional<std::string>>>)> read_done;
};

// What a node's replica answered to one ReadKeys, checked and decoded.
Result<std::vector<std::optional<std::string>>> DecodeReadKeys(const pb::ReadKeysReply& r, size_t asked,
                                                               const std::string& target) {
  if (static_cast<size_t>(r.found_size()) != asked || static_cast<size_t>(r.values_size()) != asked) {
    return Status::Corruption(target + " answered a different number of keys");
  }
  std::vector<std::optional<std::string>> values(asked);
  for (size_t i = 0; i < asked; ++i) {
    if (r.found(static_cast<int>(i))) values[i] = r.values(static_cast<int>(i));
  }
  return values;
}

// `steps`: the replica's steps for a traced request (null: none came).
void Complete(Queued& q, const Status& status, const pb::ReadKeysReply* reply, const std::string& target,
              const TraceStepsProto* steps = nullptr) {
  if (q.trace && steps && !steps->empty()) q.trace->AddSteps(FromTraceSteps(*steps), EndpointAddress(target));
  if (q.apply) return q.apply_done(status);
  if (!status.ok()) return q.read_done(status);
  q.read_done(DecodeReadKeys(*reply, q.keys_asked, target));
}

// A node's lane: the calls in flight to it and the requests waiting.
struct Lane {
  std::mutex mu;
  int in_flight = 0;
  std::vector<std::unique_ptr<Queued>> waiting;
};

}  // namespace

struct InternodeClient::Impl {
  // Calls in flight to one node before further requests wait and go
  // together in one Batch message: one call each at low load, fewer and
  // larger messages under load (each gRPC call costs both nodes CPU in
  // hand-offs and syscalls; bench/RESULTS.md).
  static constexpr int kCallsInFlightPerNode = 2;
  static constexpr size_t kMaxBatch = 256;

  std::mutex mu;
  std::map<std::string, std::shared_ptr<pb::Internode::Stub>> stubs;
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  std::map<std::string, std::shared_ptr<Lane>> lanes;
  std::atomic<uint64_t> requests{0}, bytes{0}, messages{0};
  // Calls whose callback has not finished: the destructor waits for none.
  std::mutex calls_mu;
  std::condition_variable calls_cv;
  int64_t calls = 0;

  void CallStarted() {
    std::lock_guard<std::mutex> lock(calls_mu);
    ++calls;
  }
  // Declared first in a callback, so that it ends the call after everything
  // else the callback holds is gone: nothing touches the client after it.
  struct CallEnd {
    Impl* impl;
    ~CallEnd() {
      std::lock_guard<std::mutex> lock(impl->calls_mu);
      if (--impl->calls == 0) impl->calls_cv.notify_all();
    }
  };

  std::shared_ptr<pb::Internode::Stub> StubFor(const std::string& target) {
    std::lock_guard<std::mutex> lock(mu);
    auto& stub = stubs[target];
    if (!stub) {
      grpc::ChannelArguments args;
      // A peer cut off and back (issue 29: up within 1 s of the heal): a
      // connection that stops answering is dropped after 1 s of unanswered
      // keepalive (TCP's own retransmissions would resume it only at their
      // next, exponentially later, try); a connection attempt is abandoned
      // after 500 ms (gRPC's default is 20 s; a lost SYN is retried by TCP
      // only after 1 s) and retried within 250 ms.
      args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
      args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 250);
      args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 500);
      args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
      args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 1000);
      args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
      args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
      // No gRPC retries: the coordinator already answers a failed call
      // (a hint, another replica, the speculative retry), and without the
      // retry filter a call's message is not copied and buffered for a
      // retry that never comes (no retry policy is configured): 472 against
      // 516 us of node CPU per QUORUM read over 4 runs each
      // (bench/cluster_read_cost.sh, bench/RESULTS.md).
      args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
      args.SetMaxReceiveMessageSize(256 << 20);
      args.SetMaxSendMessageSize(256 << 20);
      stub = pb::Internode::NewStub(grpc::CreateCustomChannel(target, credentials, args));
    }
    return stub;
  }
  std::shared_ptr<Lane> LaneFor(const std::string& target) {
    std::lock_guard<std::mutex> lock(mu);
    auto& lane = lanes[target];
    if (!lane) lane = std::make_shared<Lane>();
    return lane;
  }
  void Count(size_t payload) {
    ++requests;
    bytes += payload;
  }

  // Sends `q` at once when its node has a free call, else queues it for the
  // next message to that node.
  void Submit(const std::string& target, std::unique_ptr<Queued> q) {
    auto lane = LaneFor(target);
    {
      std::lock_guard<std::mutex> lock(lane->mu);
      if (lane->in_flight >= kCallsInFlightPerNode) {
        lane->waiting.push_back(std::move(q));
        return;
      }
      ++lane->in_flight;
    }
    std::vector<std::unique_ptr<Queued>> one;
    one.push_back(std::move(q));
    Send(target, lane, std::move(one));
  }

  // A call to `target` ended: the requests that waited go out together.
  void Finished(const std::string& target, const std::shared_ptr<Lane>& lane) {
    std::vector<std::unique_ptr<Queued>> next;
    {
      std::lock_guard<std::mutex> lock(lane->mu);
      if (lane->waiting.empty()) {
        --lane->in_flight;
        return;
      }
      const size_t n = std::min(kMaxBatch, lane->waiting.size());
      next.assign(std::make_move_iterator(lane->waiting.begin()), std::make_move_iterator(lane->waiting.begin() + n));
      lane->waiting.erase(lane->waiting.begin(), lane->waiting.begin() + static_cast<ptrdiff_t>(n));
    }
    Send(target, lane, std::move(next));  // the ended call's place in flight passes to this one
  }

  // One call in flight (counted in lane->in_flight) carrying `items`.
  void Send(const std::string& target, const std::shared_ptr<Lane>& lane, std::vector<std::unique_ptr<Queued>> items) {
    // Past their deadline while they waited: timed out, not sent.
    const auto now = std::chrono::system_clock::now();
    std::vector<std::unique_ptr<Queued>> live;
    for (auto& q : items) {
      if (q->deadline <= now) {
        Complete(*q, Status::Busy("timed out waiting for " + target + " (queued)"), nullptr, target);
      } else {
        live.push_back(std::move(q));
      }
    }
    if (live.empty()) return Finished(target, lane);
    ++messages;
    auto stub = StubFor(target);
    if (live.size() == 1) return SendOne(target, lane, stub, std::move(live.front()));
    struct BatchCall {
      grpc::ClientContext context;
      pb::BatchRequest request;
      pb::BatchReply reply;
      std::vector<std::unique_ptr<Queued>> items;
    };
    auto* call = new BatchCall();
    auto deadline = live.front()->deadline;
    for (auto& q : live) {
      deadline = std::min(deadline, q->deadline);
      if (q->apply) {
        *call->request.add_applies() = std::move(*q->apply);
      } else {
        *call->request.add_reads() = std::move(q->read);
      }
    }
    call->items = std::move(live);
    call->context.set_deadline(deadline);
    CallStarted();
    stub->async()->Batch(&call->context, &call->request, &call->reply, [self = this, call, target, lane](grpc::Status s) {
      CallEnd end{self};
      std::unique_ptr<BatchCall> owned(call);
      const Status whole = FromGrpc(s, target);
      int applies = 0, reads = 0;
      for (auto& q : call->items) {
        if (!whole.ok()) {
          Complete(*q, whole, nullptr, target);
          continue;
        }
        const bool apply = q->apply.has_value();
        const int i = apply ? applies++ : reads++;
        if (i >= (apply ? call->reply.applies_size() : call->reply.reads_size())) {
          Complete(*q, Status::Corruption(target + " answered fewer requests than the batch held"), nullptr, target);
          continue;
        }
        const pb::CallStatus& cs = apply ? call->reply.applies(i) : call->reply.reads(i).status();
        Complete(*q, FromGrpc(grpc::Status(static_cast<grpc::StatusCode>(cs.code()), cs.message()), target),
                 apply ? nullptr : &call->reply.reads(i).reply(), target,
                 apply ? &cs.steps() : &call->reply.reads(i).reply().steps());
      }
      self->Finished(target, lane);
    });
  }

  void SendOne(const std::string& target, const std::shared_ptr<Lane>& lane,
               const std::shared_ptr<pb::Internode::Stub>& stub, std::unique_ptr<Queued> q) {
    if (q->apply) {
      auto* call = new Call<pb::ApplyRequest, pb::ApplyReply>();
      call->request = std::move(*q->apply);
      call->context.set_deadline(q->deadline);
      CallStarted();
      stub->async()->Apply(&call->context, &call->request, &call->reply,
                           [self = this, call, target, lane, q = std::shared_ptr<Queued>(std::move(q))](grpc::Status s) {
                             CallEnd end{self};
                             std::unique_ptr<Call<pb::ApplyRequest, pb::ApplyReply>> owned(call);
                             Complete(*q, FromGrpc(s, target), nullptr, target, &call->reply.steps());
                             self->Finished(target, lane);
                           });
      return;
    }
    auto* call = new Call<pb::ReadKeysRequest, pb::ReadKeysReply>();
    call->request = std::move(q->read);
    const size_t asked = q->keys_asked;
    call->context.set_deadline(q->deadline);
    CallStarted();
    stub->async()->ReadKeys(&call->context, &call->request, &call->reply,
                            [self = this, call, target, lane, asked, q = std::shared_ptr<Queued>(std::move(q))](grpc::Status s) {
                              CallEnd end{self};
                              std::unique_ptr<Call<pb::ReadKeysRequest, pb::ReadKeysReply>> owned(call);
                              Status status = FromGrpc(s, target);
                              if (q->trace && !call->reply.steps().empty()) {
                                q->trace->AddSteps(FromTraceSteps(call->reply.steps()), EndpointAddress(target));
                              }
                              if (!status.ok()) {
                                q->read_done(status);
                              } else {
                                q->read_done(DecodeReadKeys(call->reply, asked, target));
                              }
                              self->Finished(target, lane);
                            });
  }
};

InternodeClient::InternodeClient(const InternodeTlsMaterial* tls) : impl_(std::make_unique<Impl>()) {
  if (tls != nullptr) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = tls->ca;
    ssl.pem_private_key = tls->private_key;
    ssl.pem_cert_chain = tls->certificate;
    impl_->credentials = grpc::SslCredentials(ssl);
  }
}
InternodeClient::~InternodeClient() {
  std::unique_lock<std::mutex> lock(impl_->calls_mu);
  impl_->calls_cv.wait(lock, [&] { return impl_->calls == 0; });
}

uint64_t InternodeClient::requests_sent() const { return impl_->requests.load(); }
uint64_t InternodeClient::bytes_sent() const { return impl_->bytes.load(); }
uint64_t InternodeClient::messages_sent() const { return impl_->messages.load(); }

void InternodeClient::Apply(const std::string& target, const std::string& table_uuid, const WriteSet& writes,
                            int64_t timeout_micros, const std::shared_ptr<tracing::TraceSession>& trace,
                            std::function<void(Status)> done) {
  auto q = std::make_unique<Queued>();
  q->apply.emplace();
  q->apply->set_table_uuid(table_uuid);
  q->apply->set_trace(trace != nullptr);
  q->trace = trace;
  ToWriteOps(writes, q->apply->mutable_ops());
  q->deadline = DeadlineIn(timeout_micros);
  q->apply_done = std::move(done);
  impl_->Count(writes.bytes());
  impl_->Submit(target, std::move(q));
}

void InternodeClient::ReadRange(const std::string& target, const RangeQuery& q, int64_t timeout_micros,
                                const std::shared_ptr<tracing::TraceSession>& trace,
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
  call->request.set_trace(trace != nullptr);
  call->request.set_internal(q.internal);
  call->request.set_digest(q.digest);
  size_t key_bytes = 0;
  for (const auto& k : q.keys) {
    call->request.add_keys(k);
    key_bytes += k.size();
  }
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(q.from.size() + q.lower.size() + q.upper.size() + key_bytes);
  ++impl_->messages;
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->ReadRange(&call->context, &call->request, &call->reply,
                           [self = impl_.get(), call, target, trace, done = std::move(done)](grpc::Status s) {
                             Impl::CallEnd end{self};
                             std::unique_ptr<Call<pb::ReadRangeRequest, pb::ReadRangeReply>> owned(call);
                             if (trace && !call->reply.steps().empty()) {
                               trace->AddSteps(FromTraceSteps(call->reply.steps()), EndpointAddress(target));
                             }
                             Status status = FromGrpc(s, target);
                             if (!status.ok()) return done(status);
                             RangeBatch batch;
                             batch.more = call->reply.more();
                             for (auto& e : *call->reply.mutable_entries()) {
                               batch.entries.emplace_back(std::move(*e.mutable_key()), std::move(*e.mutable_value()));
                             }
                             const auto& found = call->reply.key_found();
                             auto* values = call->reply.mutable_key_values();
                             if (found.size() == values->size()) {
                               for (int i = 0; i < found.size(); ++i) {
                                 batch.key_values.push_back(found[i] ? std::optional<std::string>(std::move(*values->Mutable(i)))
                                                                     : std::nullopt);
                               }
                             }
                             if (!call->reply.digest().empty()) batch.digest = std::move(*call->reply.mutable_digest());
                             done(std::move(batch));
                           });
}

void InternodeClient::ReadKeys(const std::string& target, const std::string& table_uuid,
                               const std::vector<std::string>& keys, bool digest, bool internal,
                               int64_t timeout_micros,
                               const std::shared_ptr<tracing::TraceSession>& trace,
                               std::function<void(Result<std::vector<std::optional<std::string>>>)> done) {
  auto q = std::make_unique<Queued>();
  q->read.set_table_uuid(table_uuid);
  q->read.set_digest(digest);
  q->read.set_internal(internal);
  q->read.set_trace(trace != nullptr);
  q->trace = trace;
  size_t bytes = 0;
  for (const auto& k : keys) {
    q->read.add_keys(k);
    bytes += k.size();
  }
  q->keys_asked = keys.size();
  q->deadline = DeadlineIn(timeout_micros);
  q->read_done = std::move(done);
  impl_->Count(bytes);
  impl_->Submit(target, std::move(q));
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
  ++impl_->messages;
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->Digest(&call->context, &call->request, &call->reply,
                        [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                          Impl::CallEnd end{self};
                          std::unique_ptr<Call<pb::DigestRequest, pb::DigestReply>> owned(call);
                          Status status = FromGrpc(s, target);
                          if (!status.ok()) return done(status);
                          done(RangeDigest{call->reply.digest(), call->reply.keys()});
                        });
}

void InternodeClient::VectorSearch(const std::string& target, const VectorSearchQuery& query, int64_t timeout_micros,
                                   std::function<void(Result<std::vector<std::string>>)> done) {
  auto* call = new Call<pb::VectorSearchRequest, pb::VectorSearchReply>();
  call->request.set_table_uuid(query.table_uuid);
  call->request.set_index(query.index);
  for (float x : query.query) call->request.add_query(x);
  call->request.set_k(query.k);
  for (const auto& [lower, upper] : query.ranges) {
    call->request.add_lowers(lower);
    call->request.add_uppers(upper);
  }
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(query.query.size() * 4);
  ++impl_->messages;
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->VectorSearch(&call->context, &call->request, &call->reply,
                              [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                                Impl::CallEnd end{self};
                                std::unique_ptr<Call<pb::VectorSearchRequest, pb::VectorSearchReply>> owned(call);
                                Status status = FromGrpc(s, target);
                                if (!status.ok()) return done(status);
                                done(std::vector<std::string>(call->reply.keys().begin(), call->reply.keys().end()));
                              });
}

void InternodeClient::Paxos(const std::string& target, const PaxosRequest& request, int64_t timeout_micros,
                            std::function<void(Result<PaxosResponse>)> done) {
  auto* call = new Call<pb::PaxosRequest, pb::PaxosReply>();
  call->request.set_phase(static_cast<pb::PaxosRequest::Phase>(request.phase));
  call->request.set_table_uuid(request.table_uuid);
  call->request.set_partition(request.partition);
  call->request.set_ballot(request.ballot);
  ToWriteOps(request.update, call->request.mutable_update());
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(request.update.bytes() + request.partition.size());
  ++impl_->messages;
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->Paxos(&call->context, &call->request, &call->reply,
                       [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                         Impl::CallEnd end{self};
                         std::unique_ptr<Call<pb::PaxosRequest, pb::PaxosReply>> owned(call);
                         Status status = FromGrpc(s, target);
                         if (!status.ok()) return done(status);
                         const pb::PaxosReply& r = call->reply;
                         PaxosResponse response;
                         response.ok = r.ok();
                         response.promised = r.promised();
                         response.accepted_ballot = r.accepted_ballot();
                         response.accepted_update = FromWriteOps(r.accepted_update());
                         response.committed_ballot = r.committed_ballot();
                         response.committed_update = FromWriteOps(r.committed_update());
                         done(std::move(response));
                       });
}

void InternodeClient::LeadCounterWrite(const std::string& target, const std::string& table_uuid,
                                       const WriteSet& relative_writes, int64_t timeout_micros,
                                       std::function<void(Result<WriteSet>)> done) {
  auto* call = new Call<pb::CounterWriteRequest, pb::CounterWriteReply>();
  call->request.set_table_uuid(table_uuid);
  ToWriteOps(relative_writes, call->request.mutable_ops());
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(relative_writes.bytes());
  ++impl_->messages;
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->LeadCounterWrite(&call->context, &call->request, &call->reply,
                                  [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                                    Impl::CallEnd end{self};
                                    std::unique_ptr<Call<pb::CounterWriteRequest, pb::CounterWriteReply>> owned(call);
                                    Status status = FromGrpc(s, target);
                                    if (!status.ok()) return done(status);
                                    done(FromWriteOps(call->reply.shards()));
                                  });
}

void InternodeClient::ExportPaxosState(const std::string& target, const std::string& table_uuid,
                                       const std::string& lower, const std::string& upper, int64_t timeout_micros,
                                       std::function<void(Result<PaxosStateRows>)> done) {
  auto* call = new Call<pb::PaxosStateRequest, pb::PaxosStateRows>();
  call->request.set_table_uuid(table_uuid);
  call->request.set_lower(lower);
  call->request.set_upper(upper);
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(lower.size() + upper.size());
  ++impl_->messages;
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->ExportPaxosState(&call->context, &call->request, &call->reply,
                                  [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                                    Impl::CallEnd end{self};
                                    std::unique_ptr<Call<pb::PaxosStateRequest, pb::PaxosStateRows>> owned(call);
                                    Status status = FromGrpc(s, target);
                                    if (!status.ok()) return done(status);
                                    PaxosStateRows rows;
                                    for (const auto& kv : call->reply.rows()) rows.emplace_back(kv.key(), kv.value());
                                    done(std::move(rows));
                                  });
}

void InternodeClient::ImportPaxosState(const std::string& target, const std::string& table_uuid,
                                       const PaxosStateRows& rows, int64_t timeout_micros,
                                       std::function<void(Status)> done) {
  auto* call = new Call<pb::PaxosStateRows, pb::ImportPaxosStateReply>();
  call->request.set_table_uuid(table_uuid);
  size_t bytes = 0;
  for (const auto& [k, v] : rows) {
    pb::KeyValue* kv = call->request.add_rows();
    kv->set_key(k);
    kv->set_value(v);
    bytes += k.size() + v.size();
  }
  SetDeadline(&call->context, timeout_micros);
  impl_->Count(bytes);
  ++impl_->messages;
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->ImportPaxosState(&call->context, &call->request, &call->reply,
                                  [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                                    Impl::CallEnd end{self};
                                    std::unique_ptr<Call<pb::PaxosStateRows, pb::ImportPaxosStateReply>> owned(call);
                                    done(FromGrpc(s, target));
                                  });
}

void InternodeClient::StoreTrace(const std::string& target, const tracing::TraceSessionRecord& session,
                                 int64_t timeout_micros, std::function<void(Status)> done) {
  auto* call = new Call<pb::TraceSession, pb::StoreTraceReply>();
  ToTraceSession(session, &call->request);
  SetDeadline(&call->context, timeout_micros);
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->StoreTrace(&call->context, &call->request, &call->reply,
                            [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                              Impl::CallEnd end{self};
                              std::unique_ptr<Call<pb::TraceSession, pb::StoreTraceReply>> owned(call);
                              done(FromGrpc(s, target));
                            });
}

void InternodeClient::Ping(const std::string& target, const std::string& from_host_id, int64_t timeout_micros,
                           std::function<void(Status)> done) {
  auto* call = new Call<pb::PingRequest, pb::PingReply>();
  call->request.set_from_host_id(from_host_id);
  SetDeadline(&call->context, timeout_micros);
  auto stub = impl_->StubFor(target);
  impl_->CallStarted();
  stub->async()->Ping(&call->context, &call->request, &call->reply,
                      [self = impl_.get(), call, target, done = std::move(done)](grpc::Status s) {
                        Impl::CallEnd end{self};
                        std::unique_ptr<Call<pb::PingRequest, pb::PingReply>> owned(call);
                        done(FromGrpc(s, target));
                      });
}

}  // namespace tessera::cluster
