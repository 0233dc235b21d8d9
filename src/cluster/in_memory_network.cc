#include "cluster/in_memory_network.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include "cluster/replica_service.h"

namespace tessera::cluster {
namespace {

Status TimedOut() { return Status::Busy("timed out"); }

class InMemoryTransport final : public InternodeTransport {
 public:
  InMemoryTransport(InMemoryNetwork* network, std::string self) : network_(network), self_(std::move(self)) {}
  // As InternodeClient's: waits until every call in flight has ended (each has a deadline), so that no
  // callback outlives the node that made the call.
  ~InMemoryTransport() override {
    std::unique_lock<std::mutex> lock(calls_->mu);
    calls_->ended.wait(lock, [this] { return calls_->in_flight == 0; });
  }

  void Apply(const std::string& target, const std::string& table_uuid, const WriteSet& relative_writes,
             int64_t timeout_micros, const std::shared_ptr<tracing::TraceSession>& trace,
             std::function<void(Status)> done) override {
    Count(relative_writes.bytes());
    Call<Status>(target, timeout_micros,
                 [table_uuid, writes = relative_writes, trace, source = EndpointAddress(target)](ReplicaService* r) {
                   if (!trace) return r->Apply(table_uuid, writes);
                   tracing::ReplicaSteps steps;
                   Status s = r->Apply(table_uuid, writes, &steps);
                   trace->AddSteps(std::move(steps.events()), source);
                   return s;
                 },
                 std::move(done));
  }

  void ReadRange(const std::string& target, const RangeQuery& query, int64_t timeout_micros,
                 const std::shared_ptr<tracing::TraceSession>& trace,
                 std::function<void(Result<RangeBatch>)> done) override {
    Count(query.lower.size() + query.upper.size() + query.from.size());
    Call<Result<RangeBatch>>(
        target, timeout_micros,
        [query, trace, source = EndpointAddress(target)](ReplicaService* r) {
          if (!trace) return r->ReadRange(query);
          tracing::ReplicaSteps steps;
          auto batch = r->ReadRange(query, &steps);
          trace->AddSteps(std::move(steps.events()), source);
          return batch;
        },
        std::move(done));
  }

  void ReadKeys(const std::string& target, const std::string& table_uuid,
                const std::vector<std::string>& relative_keys, bool digest, bool internal, int64_t timeout_micros,
                const std::shared_ptr<tracing::TraceSession>& trace,
                std::function<void(Result<std::vector<std::optional<std::string>>>)> done) override {
    size_t bytes = 0;
    for (const auto& k : relative_keys) bytes += k.size();
    Count(bytes);
    Call<Result<std::vector<std::optional<std::string>>>>(
        target, timeout_micros,
        [table_uuid, keys = relative_keys, digest, internal, trace, source = EndpointAddress(target)](ReplicaService* r) {
          if (!trace) return r->ReadKeys(table_uuid, keys, digest, nullptr, internal);
          tracing::ReplicaSteps steps;
          auto values = r->ReadKeys(table_uuid, keys, digest, &steps, internal);
          trace->AddSteps(std::move(steps.events()), source);
          return values;
        },
        std::move(done));
  }

  void Digest(const std::string& target, const std::string& table_uuid, const std::string& lower,
              const std::string& upper, int64_t timeout_micros,
              std::function<void(Result<RangeDigest>)> done) override {
    Count(lower.size() + upper.size());
    Call<Result<RangeDigest>>(
        target, timeout_micros,
        [table_uuid, lower, upper](ReplicaService* r) { return r->Digest(table_uuid, lower, upper); },
        std::move(done));
  }

  void VectorSearch(const std::string& target, const VectorSearchQuery& query, int64_t timeout_micros,
                    std::function<void(Result<std::vector<std::string>>)> done) override {
    Count(query.query.size() * 4);
    Call<Result<std::vector<std::string>>>(
        target, timeout_micros, [query](ReplicaService* r) { return r->VectorSearch(query); }, std::move(done));
  }

  void Paxos(const std::string& target, const PaxosRequest& request, int64_t timeout_micros,
             std::function<void(Result<PaxosResponse>)> done) override {
    Count(request.update.bytes() + request.partition.size());
    Call<Result<PaxosResponse>>(target, timeout_micros, [request](ReplicaService* r) { return r->Paxos(request); },
                                std::move(done));
  }

  void LeadCounterWrite(const std::string& target, const std::string& table_uuid, const WriteSet& relative_writes,
                        int64_t timeout_micros, std::function<void(Result<WriteSet>)> done) override {
    Count(relative_writes.bytes());
    Call<Result<WriteSet>>(
        target, timeout_micros,
        [table_uuid, writes = relative_writes](ReplicaService* r) { return r->LeadCounterWrite(table_uuid, writes); },
        std::move(done));
  }

  void ExportPaxosState(const std::string& target, const std::string& table_uuid, const std::string& lower,
                        const std::string& upper, int64_t timeout_micros,
                        std::function<void(Result<PaxosStateRows>)> done) override {
    Count(lower.size() + upper.size());
    Call<Result<PaxosStateRows>>(
        target, timeout_micros,
        [table_uuid, lower, upper](ReplicaService* r) { return r->ExportPaxosState(table_uuid, lower, upper); },
        std::move(done));
  }

  void ImportPaxosState(const std::string& target, const std::string& table_uuid, const PaxosStateRows& rows,
                        int64_t timeout_micros, std::function<void(Status)> done) override {
    size_t bytes = 0;
    for (const auto& [k, v] : rows) bytes += k.size() + v.size();
    Count(bytes);
    Call<Status>(target, timeout_micros,
                 [table_uuid, rows](ReplicaService* r) { return r->ImportPaxosState(table_uuid, rows); },
                 std::move(done));
  }

  void StoreTrace(const std::string& target, const tracing::TraceSessionRecord& session, int64_t timeout_micros,
                  std::function<void(Status)> done) override {
    Call<Status>(target, timeout_micros,
                 [session](ReplicaService* r) {
                   r->StoreTrace(session);
                   return Status::OK();
                 },
                 std::move(done));
  }

  void Ping(const std::string& target, const std::string&, int64_t timeout_micros,
            std::function<void(Status)> done) override {
    Call<Status>(target, timeout_micros, [](ReplicaService*) { return Status::OK(); }, std::move(done));
  }

  uint64_t requests_sent() const override { return requests_.load(); }
  uint64_t bytes_sent() const override { return bytes_.load(); }
  uint64_t messages_sent() const override { return requests_.load(); }  // no batching

 private:
  void Count(size_t bytes) {
    requests_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }

  // Request to `target`, served there, reply back: each leg through the network's links.
  template <typename R>
  void Call(const std::string& target, int64_t timeout_micros, std::function<R(ReplicaService*)> serve,
            std::function<void(R)> done) {
    const int64_t deadline = InMemoryNetwork::NowMicros() + timeout_micros;
    {
      std::lock_guard<std::mutex> lock(calls_->mu);
      ++calls_->in_flight;
    }
    auto finish = std::make_shared<std::function<void(R)>>(
        [calls = calls_, done = std::move(done)](R result) {
          done(std::move(result));
          std::lock_guard<std::mutex> lock(calls->mu);
          if (--calls->in_flight == 0) calls->ended.notify_all();
        });
    auto failed = [finish](Status s) { (*finish)(R(std::move(s))); };
    InMemoryNetwork* network = network_;
    network_->Send(
        self_, target, deadline,
        [network, self = self_, target, deadline, serve = std::move(serve), finish, failed](ReplicaService* r) {
          auto result = std::make_shared<R>(serve(r));
          network->Reply(target, self, deadline, [finish, result] { (*finish)(std::move(*result)); }, failed);
        },
        failed);
  }

  struct Calls {
    std::mutex mu;
    std::condition_variable ended;
    uint64_t in_flight = 0;
  };
  InMemoryNetwork* network_;
  const std::string self_;
  std::shared_ptr<Calls> calls_ = std::make_shared<Calls>();
  std::atomic<uint64_t> requests_{0}, bytes_{0};
};

}  // namespace

InMemoryNetwork::InMemoryNetwork() : thread_([this] { Deliver(); }) {}

InMemoryNetwork::~InMemoryNetwork() { Stop(); }

int64_t InMemoryNetwork::NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void InMemoryNetwork::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::map<std::pair<int64_t, uint64_t>, Task> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(queue_);
  }
  for (auto& [due, task] : left) task.abort();
}

void InMemoryNetwork::Register(const std::string& endpoint, ReplicaService* replica) {
  std::lock_guard<std::mutex> lock(mu_);
  replicas_[endpoint] = replica;
}

void InMemoryNetwork::Unregister(const std::string& endpoint) {
  std::lock_guard<std::mutex> serving(serve_mu_);  // waits out a request being served there
  std::lock_guard<std::mutex> lock(mu_);
  replicas_.erase(endpoint);
}

void InMemoryNetwork::SetLink(const std::string& from, const std::string& to, Link link) {
  std::lock_guard<std::mutex> lock(mu_);
  links_[{from, to}] = link;
}

void InMemoryNetwork::Cut(const std::string& a, const std::string& b) {
  std::lock_guard<std::mutex> lock(mu_);
  links_[{a, b}].cut = true;
  links_[{b, a}].cut = true;
}

void InMemoryNetwork::HealAll() {
  std::lock_guard<std::mutex> lock(mu_);
  links_.clear();
}

uint64_t InMemoryNetwork::messages_lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
}

std::unique_ptr<InternodeTransport> InMemoryNetwork::Transport(const std::string& self_endpoint) {
  return std::make_unique<InMemoryTransport>(this, self_endpoint);
}

bool InMemoryNetwork::Passes(const std::string& from, const std::string& to, int64_t* delay_micros) {
  *delay_micros = 0;
  auto it = links_.find({from, to});
  if (it == links_.end()) return true;
  const Link& link = it->second;
  *delay_micros = link.delay_micros;
  const bool lost = link.cut || (link.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < link.loss);
  if (lost) ++lost_;
  return !lost;
}

void InMemoryNetwork::Schedule(int64_t due_micros, std::function<void()> run, std::function<void()> abort) {
  queue_.emplace(std::make_pair(due_micros, seq_++), Task{std::move(run), std::move(abort)});
  wake_.notify_one();
}

bool InMemoryNetwork::Open(std::unique_lock<std::mutex>& lock, const std::function<void(Status)>& failed) {
  if (!stopping_) return true;
  lock.unlock();
  failed(Status::IOError("network stopped"));
  return false;
}

std::function<void()> InMemoryNetwork::Aborter(std::function<void(Status)> failed) {
  return [failed = std::move(failed)] { failed(Status::IOError("network stopped")); };
}

void InMemoryNetwork::Send(const std::string& from, const std::string& to, int64_t deadline_micros,
                           std::function<void(ReplicaService*)> deliver, std::function<void(Status)> failed) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!Open(lock, failed)) return;
  auto abort = Aborter(failed);
  const int64_t now = NowMicros();
  int64_t delay = 0;
  if (!replicas_.count(to)) {
    Schedule(now, [failed, to] { failed(Status::IOError("unreachable: nothing listens at " + to)); }, abort);
  } else if (!Passes(from, to, &delay)) {
    Schedule(deadline_micros, [failed] { failed(TimedOut()); }, abort);
  } else {
    Schedule(
        now + delay,
        [this, to, deadline_micros, deliver = std::move(deliver), failed] {
          std::lock_guard<std::mutex> serving(serve_mu_);  // Unregister waits for this request
          ReplicaService* replica = nullptr;
          {
            std::lock_guard<std::mutex> lock(mu_);
            auto it = replicas_.find(to);
            if (it != replicas_.end()) replica = it->second;
            // Gone while the request travelled: it is lost.
            if (replica == nullptr) {
              Schedule(deadline_micros, [failed] { failed(TimedOut()); }, Aborter(failed));
            }
          }
          if (replica != nullptr) deliver(replica);
        },
        abort);
  }
}

void InMemoryNetwork::Reply(const std::string& from, const std::string& to, int64_t deadline_micros,
                            std::function<void()> arrive, std::function<void(Status)> failed) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!Open(lock, failed)) return;
  auto abort = Aborter(failed);
  int64_t delay = 0;
  const int64_t at = NowMicros();
  if (!Passes(from, to, &delay) || at + delay > deadline_micros) {
    Schedule(std::max(deadline_micros, at), [failed] { failed(TimedOut()); }, abort);
  } else {
    Schedule(at + delay, std::move(arrive), abort);
  }
}

void InMemoryNetwork::Deliver() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const int64_t due = queue_.begin()->first.first;
    const int64_t now = NowMicros();
    if (due > now) {
      wake_.wait_for(lock, std::chrono::microseconds(due - now));
      continue;
    }
    Task task = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    lock.unlock();
    task.run();
    lock.lock();
  }
}

}  // namespace tessera::cluster
