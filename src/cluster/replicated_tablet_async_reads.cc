// ReplicatedTablet's key reads, without a waiting thread (issue 28 item 1):
// the replica choice, digest round, speculative retry and blocking read
// repair of a key read. Where a range read's AskAll (replicated_tablet.cc)
// waits on a condition variable, ParallelAsk below moves on from each
// replica's answer and from one DelayedCalls timer (the speculative retry);
// the read answers from whichever thread completes it. MultiGet waits for
// MultiGetAsync.
#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

#include "cluster/replica_reads.h"
#include "cluster/replicated_tablet_internal.h"
#include "db/database.h"

namespace tessera::cluster {
namespace {

using Values = std::vector<std::optional<std::string>>;

// A replica a read may ask, copied: the read outlives the vector its
// targets came in.
using Peer = ReplicatedTablet::Target;

std::vector<Peer> PeersOf(const std::vector<const Peer*>& targets) {
  std::vector<Peer> peers;
  for (const Peer* t : targets) peers.push_back(*t);
  return peers;
}

// Asks `peer` (the candidate at `index`) within `timeout_micros`; `done`
// exactly once, on any thread (inline for this node).
template <typename T>
using AskPeer = std::function<void(const Peer& peer, size_t index, int64_t timeout_micros,
                                   std::function<void(Result<T>)> done)>;
// The answers of the replicas that succeeded, and those replicas, both in
// candidate order; or ReadTimeout.
template <typename T>
using AskedDone = std::function<void(Result<std::vector<T>> answers, std::vector<Peer> asked)>;

// How a traced read names its messages (Cassandra's verbs) and this node's own read.
struct TracedMessage {
  const char* verb;
  const char* local;
};
constexpr TracedMessage kReadMessage{"READ", "Reading on this node's replica"};
constexpr TracedMessage kRangeMessage{"RANGE", "Reading a key range on this node's replica"};

// One read's replicas asked in parallel (AskAll's rules): the first
// block_for candidates at once (this node last, once the remote requests are
// on their way); one more when the speculative threshold passes with answers
// missing; more after error answers, unless the policy is NONE; done once
// block_for answers succeeded, or as soon as they no longer can. Every
// request carries what is left of the read time-out as its deadline, so the
// read ends by then without a timer of its own.
template <typename T>
class ParallelAsk : public std::enable_shared_from_this<ParallelAsk<T>> {
 public:
  ParallelAsk(ReplicationServices* services, std::vector<Peer> candidates, const ConsistencyPlan& plan,
              int64_t threshold_micros, const RequestConsistency& consistency, AskPeer<T> ask, AskedDone<T> done,
              TracedMessage message = kReadMessage)
      : services_(services),
        candidates_(std::move(candidates)),
        n_(static_cast<int>(candidates_.size())),
        block_for_(std::min(plan.block_for, n_)),
        plan_block_for_(plan.block_for),
        threshold_(threshold_micros),
        deadline_(NowMicros() + services->read_timeout_micros),
        consistency_(consistency),
        ask_(std::move(ask)),
        done_(std::move(done)),
        message_(message),
        answers_(candidates_.size()) {}

  void Start() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      sent_ = block_for_;
    }
    std::optional<size_t> self;
    for (int i = 0; i < block_for_; ++i) {
      if (candidates_[static_cast<size_t>(i)].info.local) {
        self = static_cast<size_t>(i);
      } else {
        Send(static_cast<size_t>(i));
      }
    }
    if (self) Send(*self);
    if (block_for_ == 0) return Finish();
    bool speculate = threshold_ >= 0 && block_for_ < n_ && services_->delayed_calls != nullptr;
    if (speculate) {
      std::lock_guard<std::mutex> lock(mu_);
      speculate = !finished_;
    }
    if (speculate) {
      // Weak: a finished read is not kept until its timer fires. A read that
      // finishes first takes its timer out (Finish), so the timer thread
      // does not wake for it.
      const uint64_t timer = services_->delayed_calls->After(threshold_, [weak = this->weak_from_this()] {
        if (auto self = weak.lock()) self->Speculate();
      });
      bool finished;
      {
        std::lock_guard<std::mutex> lock(mu_);
        finished = finished_;
        if (!finished) timer_ = timer;
      }
      if (finished) services_->delayed_calls->Cancel(timer);
    }
  }

 private:
  void Send(size_t i) {
    const Peer& peer = candidates_[i];
    const int64_t now = NowMicros();
    if (!peer.info.local) services_->latency.Sent(peer.info.host_id);
    if (consistency_.trace) {
      TraceStep(consistency_, peer.info.local ? std::string(message_.local)
                                              : "Sending " + std::string(message_.verb) + " message to " + TracedPeer(peer));
    }
    ask_(peer, i, std::max<int64_t>(deadline_ - now, 1),
         [self = this->shared_from_this(), i, now](Result<T> r) { self->Answered(i, std::move(r), now); });
  }

  void Answered(size_t i, Result<T> answer, int64_t sent_at) {
    const Peer& peer = candidates_[i];
    const bool ok = answer.ok();
    const int64_t now = NowMicros();
    if (!peer.info.local) services_->latency.Answered(peer.info.host_id, now - sent_at, ok, now);
    if (consistency_.trace && !peer.info.local) {
      const std::string verb = message_.verb;
      TraceStep(consistency_, (ok ? verb + " answered by " + TracedPeer(peer)
                                  : verb + " failed on " + TracedPeer(peer) + ": " + answer.status().message()) +
                                  " after " + std::to_string(now - sent_at) + " us");
    }
    std::vector<size_t> more;
    bool finish = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      answers_[i] = std::move(answer);
      ++answered_;
      succeeded_ += ok;
      if (finished_) return;
      const int outstanding = sent_ - answered_;
      const int missing = block_for_ - succeeded_;
      if (missing <= 0) {
        finish = true;
      } else if (outstanding < missing) {  // error answers: those still out cannot make block_for
        if (threshold_ < 0 || sent_ == n_ || now >= deadline_) {  // NONE asks no other replica, as Cassandra
          finish = true;
        } else {
          for (int k = std::min(missing - outstanding, n_ - sent_); k > 0; --k) more.push_back(static_cast<size_t>(sent_++));
        }
      }
      finished_ = finish;
    }
    if (!more.empty()) ++services_->speculative_retries;
    for (size_t j : more) Send(j);
    if (finish) Finish();
  }

  // The speculative retry: one more replica when answers are still missing.
  void Speculate() {
    size_t next;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_ || sent_ >= n_ || answered_ >= sent_) return;
      const int64_t now = NowMicros();
      for (int i = 0; i < sent_; ++i) {
        const Peer& peer = candidates_[static_cast<size_t>(i)];
        if (!answers_[static_cast<size_t>(i)] && !peer.info.local) services_->latency.Missed(peer.info.host_id, now);
      }
      next = static_cast<size_t>(sent_++);
    }
    ++services_->speculative_retries;
    if (consistency_.trace) {
      TraceStep(consistency_, "Speculative retry: no answer within " + std::to_string(threshold_) +
                                  " us, asking one more replica");
    }
    Send(next);
  }

  // Once, after finished_ was set (or nothing was to be asked). Lets go of
  // `done_` (and what it holds, such as a placement fence) at once, though
  // answers still out keep this object until they come.
  void Finish() {
    AskedDone<T> done = std::move(done_);
    std::vector<T> answers;
    std::vector<Peer> asked;
    int succeeded;
    uint64_t timer;
    {
      std::lock_guard<std::mutex> lock(mu_);
      timer = std::exchange(timer_, 0);
      succeeded = succeeded_;
      for (size_t i = 0; i < answers_.size() && succeeded >= block_for_; ++i) {
        auto& a = answers_[i];
        if (!a || !a->ok()) continue;
        asked.push_back(candidates_[i]);
        answers.push_back(std::move(a->value()));
      }
    }
    if (timer != 0) services_->delayed_calls->Cancel(timer);
    if (succeeded < block_for_) {
      ++services_->read_timeouts;
      return done(ConsistencyTimeout(Status::Code::kReadTimeout, consistency_, succeeded, plan_block_for_,
                                      succeeded > 0),
                   {});
    }
    done(std::move(answers), std::move(asked));
  }

  ReplicationServices* const services_;
  const std::vector<Peer> candidates_;
  const int n_;
  const int block_for_;       // what must succeed: the plan's, at most n_
  const int plan_block_for_;  // what a ReadTimeout reports
  const int64_t threshold_;   // -1: never speculate
  const int64_t deadline_;
  const RequestConsistency consistency_;
  const AskPeer<T> ask_;
  AskedDone<T> done_;  // moved out by Finish
  const TracedMessage message_;
  std::mutex mu_;
  std::vector<std::optional<Result<T>>> answers_;  // by candidate
  int sent_ = 0, answered_ = 0, succeeded_ = 0;
  bool finished_ = false;
  uint64_t timer_ = 0;  // the speculative retry's DelayedCalls handle, while pending
};

// Repair's twin: each of `repairs` written back to the replica of `asked` at
// its index; `done` gets OK once all acknowledged, else ReadTimeout.
void RepairAsync(ReplicationServices* services, const std::shared_ptr<const TableSchema>& table,
                 const std::vector<Peer>& asked, const std::vector<WriteSet>& repairs,
                 const RequestConsistency& consistency, std::function<void(Status)> done) {
  struct Pending {
    std::mutex mu;
    int remaining = 0;
    int succeeded = 0;
  };
  auto pending = std::make_shared<Pending>();
  const int sent = static_cast<int>(std::count_if(repairs.begin(), repairs.end(), [](const WriteSet& w) { return !w.empty(); }));
  if (sent == 0) return done(Status::OK());
  if (consistency.trace) {
    TraceStep(consistency, "Read repair: writing back to " + std::to_string(sent) +
                               (sent == 1 ? " replica" : " replicas"));
  }
  pending->remaining = sent;
  const int n = static_cast<int>(asked.size());
  auto record = [services, table, pending, sent, n, consistency, done = std::move(done)](bool ok) {
    {
      std::lock_guard<std::mutex> lock(pending->mu);
      pending->succeeded += ok;
      if (--pending->remaining > 0) return;
    }
    const int succeeded = pending->succeeded;
    if (succeeded >= sent) return done(Status::OK());
    ++services->read_timeouts;
    spdlog::warn("read repair of {}.{} was not acknowledged by every replica", table->keyspace, table->name);
    done(ConsistencyTimeout(Status::Code::kReadTimeout, consistency, n - (sent - succeeded), n, true));
  };
  for (size_t i = 0; i < asked.size(); ++i) {
    if (repairs[i].empty()) continue;
    services->read_repairs += repairs[i].size();
    if (asked[i].info.local) {
      record(ApplyLocal(services->db->engine(), table->id, repairs[i]).ok());
      continue;
    }
    services->client->Apply(asked[i].endpoint, table->uuid, repairs[i], services->write_timeout_micros,
                            consistency.trace, [record](Status s) { record(s.ok()); });
  }
}

// The point keys read with a window (RangeQuery::keys), reconciled as a
// full key read's answers: `window` gets their values (absolute keys
// unchanged), `repairs` (one per answer, as ReconcileRangeAnswers left
// them) what each replica lacks. When an answer holds no values for them (a
// replica of an older release), `window` gets none, and the caller reads
// them on their own.
Status ReconcileWindowKeys(const std::vector<std::string>& relative_keys,
                           const std::vector<RangeBatch>& answers, KeyWindow* window, std::vector<WriteSet>* repairs) {
  window->key_values.clear();
  if (relative_keys.empty()) return Status::OK();
  std::vector<std::vector<std::optional<std::string>>> values;
  for (const RangeBatch& a : answers) {
    if (a.key_values.size() != relative_keys.size()) return Status::OK();
    values.push_back(a.key_values);
  }
  std::vector<WriteSet> key_repairs;
  TESSERA_RETURN_IF_ERROR(ReconcileKeyAnswers(relative_keys, values, &window->key_values, &key_repairs));
  for (size_t i = 0; i < key_repairs.size() && i < repairs->size(); ++i) {
    for (const WriteSet::Op& op : key_repairs[i].ops()) (*repairs)[i].Merge(op.key, op.value);  // merges only
  }
  return Status::OK();
}

// The data answer among a window's `answers` when every answer, data or
// digest, has its WindowDigest; null when none is data or one disagrees
// (a replica of an older release answers data to a digest request, which
// counts by its digest as well).
RangeBatch* AgreedWindow(std::vector<RangeBatch>& answers) {
  RangeBatch* data = nullptr;
  for (RangeBatch& a : answers) {
    if (!a.digest) {
      data = &a;
      break;
    }
  }
  if (data == nullptr) return nullptr;
  const std::string digest = WindowDigest(*data);
  for (const RangeBatch& a : answers) {
    if (&a == data) continue;
    if ((a.digest ? *a.digest : WindowDigest(a)) != digest) return nullptr;
  }
  return data;
}

// The data answer every replica agreed with as the caller's window: keys
// made absolute, values moved (what ReconcileRangeAnswers and
// ReconcileWindowKeys make of one answer, without their copies).
KeyWindow AgreedAsWindow(uint32_t table_id, size_t point_keys, RangeBatch data) {
  KeyWindow window;
  window.more = data.more && !data.entries.empty();
  window.entries.reserve(data.entries.size());
  for (auto& [k, v] : data.entries) window.entries.emplace_back(AbsoluteKey(table_id, k), std::move(v));
  if (point_keys > 0 && data.key_values.size() == point_keys) window.key_values = std::move(data.key_values);
  return window;
}

}  // namespace

void ReplicatedTablet::MultiGetAsync(std::vector<std::string> keys, const RequestConsistency& consistency,
                                     MultiGetDone done) {
  std::vector<std::string> relative;
  for (const auto& k : keys) relative.push_back(RelativeKey(table_->id, k).value_or(std::string()));
  ReadKeysAsync(std::move(relative), consistency, [n = keys.size(), done = std::move(done)](Result<Values> read) {
    std::vector<std::string> values(n);
    std::vector<Status> statuses(n, Status::NotFound(""));
    for (size_t i = 0; i < n; ++i) {
      if (!read.ok()) {
        statuses[i] = read.status();
      } else if ((*read)[i]) {
        values[i] = std::move(*(*read)[i]);
        statuses[i] = Status::OK();
      }
    }
    done(std::move(values), std::move(statuses));
  });
}

void ReplicatedTablet::ReadKeysAsync(std::vector<std::string> keys, const RequestConsistency& consistency,
                                     KeysDone done) {
  // Held until answered, as a write holds it.
  auto fence = std::make_shared<PlacementFence::RequestGuard>(&services_->placement_fence);
  auto read = PlanRead(consistency.level);
  if (!read.ok()) return done(read.status());
  const ConsistencyPlan& plan = (*read)->plan;
  // One replica alone (ONE, or RF 1): its data, as a full read asks.
  if (plan.block_for <= 1) return ReadKeysInFullAsync(std::move(keys), consistency, /*counted=*/false, std::move(done));
  CountCoordinated((*read)->all);
  auto self = shared_from_this();
  auto shared_keys = std::make_shared<const std::vector<std::string>>(std::move(keys));
  const size_t block_for = static_cast<size_t>(plan.block_for);
  AskPeer<KeysAnswer> ask = [self, shared_keys, block_for, trace = consistency.trace, internal = consistency.internal](
                                const Peer& peer, size_t index, int64_t timeout,
                                std::function<void(Result<KeysAnswer>)> answered) {
    if (peer.info.local) {  // always the first candidate: data
      if (!internal) self->services_->db->CountReplicaRequest(self->table_->id, self->start_, /*write=*/false);
      auto values = ReadKeysLocal(self->services_->db->engine(), self->table_->id, *shared_keys);
      if (!values.ok()) return answered(values.status());
      return answered(KeysAnswer{false, std::move(values).value()});
    }
    // The first candidate answers data; the others of the first block_for
    // digests; any asked later (speculation, an error answer) data again.
    const bool digest = index > 0 && index < block_for;
    self->services_->client->ReadKeys(peer.endpoint, self->table_->uuid, *shared_keys, digest, internal, timeout, trace,
                                      [digest, answered = std::move(answered)](Result<Values> r) {
                                        if (!r.ok()) return answered(r.status());
                                        answered(KeysAnswer{digest, std::move(r).value()});
                                      });
  };
  AskedDone<KeysAnswer> finished = [self, fence, shared_keys, consistency, done = std::move(done)](
                                       Result<std::vector<KeysAnswer>> answers, std::vector<Peer>) {
    if (!answers.ok()) return done(answers.status());
    ++self->services_->digest_reads;
    if (const KeysAnswer* data = AgreedData(*answers, shared_keys->size())) return done(data->values);
    ++self->services_->digest_mismatches;
    if (consistency.trace) TraceStep(consistency, "Digest mismatch: reading data from every replica asked");
    self->ReadKeysInFullAsync(*shared_keys, consistency, /*counted=*/true, done);
  };
  std::make_shared<ParallelAsk<KeysAnswer>>(services_, PeersOf((*read)->asked), plan, SpeculativeThresholdMicros(),
                                            consistency, std::move(ask), std::move(finished))
      ->Start();
}

void ReplicatedTablet::ReadKeysInFullAsync(std::vector<std::string> keys, const RequestConsistency& consistency,
                                           bool counted, KeysDone done) {
  auto fence = std::make_shared<PlacementFence::RequestGuard>(&services_->placement_fence);
  auto read = PlanRead(consistency.level);
  if (!read.ok()) return done(read.status());
  if (!counted) CountCoordinated((*read)->all);
  auto self = shared_from_this();
  auto shared_keys = std::make_shared<const std::vector<std::string>>(std::move(keys));
  AskPeer<Values> ask = [self, shared_keys, trace = consistency.trace, internal = consistency.internal](
                             const Peer& peer, size_t, int64_t timeout, std::function<void(Result<Values>)> answered) {
    if (peer.info.local) {
      if (!internal) self->services_->db->CountReplicaRequest(self->table_->id, self->start_, /*write=*/false);
      return answered(ReadKeysLocal(self->services_->db->engine(), self->table_->id, *shared_keys));
    }
    self->services_->client->ReadKeys(peer.endpoint, self->table_->uuid, *shared_keys, /*digest=*/false, internal,
                                      timeout, trace, std::move(answered));
  };
  AskedDone<Values> finished = [self, fence, shared_keys, consistency, done = std::move(done)](
                                   Result<std::vector<Values>> answers, std::vector<Peer> asked) {
    if (!answers.ok()) return done(answers.status());
    auto out = std::make_shared<Values>();
    std::vector<WriteSet> repairs;
    Status reconciled = ReconcileKeyAnswers(*shared_keys, *answers, out.get(), &repairs);
    if (!reconciled.ok()) return done(reconciled);
    RepairAsync(self->services_, self->table_, asked, repairs, consistency, [out, fence, done](Status repaired) {
      if (!repaired.ok()) return done(repaired);
      done(std::move(*out));
    });
  };
  std::make_shared<ParallelAsk<Values>>(services_, PeersOf((*read)->asked), (*read)->plan,
                                        SpeculativeThresholdMicros(), consistency, std::move(ask), std::move(finished))
      ->Start();
}

void ReplicatedTablet::ReadWindowAsync(const KeyWindowRead& read, const RequestConsistency& consistency,
                                       WindowDone done) {
  // Held until answered, as a write holds it.
  auto fence = std::make_shared<PlacementFence::RequestGuard>(&services_->placement_fence);
  auto replicas = PlanRead(consistency.level);
  if (!replicas.ok()) return done(replicas.status());
  const std::vector<const Target*>& asked = (*replicas)->asked;
  if (asked.size() == 1 && asked.front()->info.local) {  // this node alone: its storage, as NewIterator
    // Counted as a request served, as the same window read from another
    // node is (ReplicaService::ReadRange).
    if (!consistency.internal) services_->db->CountReplicaRequest(table_->id, start_, /*write=*/false);
    auto it = services_->db->engine()->NewIterator(IteratorLower(read), read.upper);
    return done(ReadWindowFrom(it.get(), read));
  }
  auto query = std::make_shared<RangeQuery>();
  query->table_uuid = table_->uuid;
  query->lower = RelativeKey(table_->id, read.lower).value_or(std::string());
  query->upper = read.upper.empty() ? std::string() : RelativeKey(table_->id, read.upper).value_or(std::string());
  query->from = RelativeKey(table_->id, read.from).value_or(std::string());
  query->from_inclusive = read.from_inclusive;
  query->reverse = read.reverse;
  query->from_end = read.from_end;
  query->limit = read.limit;
  query->internal = consistency.internal;
  for (const auto& k : read.keys) query->keys.push_back(RelativeKey(table_->id, k).value_or(std::string()));
  const ConsistencyPlan& plan = (*replicas)->plan;
  // One replica alone (ONE, or RF 1): its data, as a full read asks.
  if (plan.block_for <= 1) return ReadWindowInFullAsync(std::move(query), consistency, /*counted=*/false, std::move(done));
  CountCoordinated((*replicas)->all);
  auto self = shared_from_this();
  const size_t block_for = static_cast<size_t>(plan.block_for);
  // The first candidate (this node when it is one) answers data; the others
  // of the first block_for digests of the same window; any asked later
  // (speculation, an error answer) data again.
  auto digest_query = std::make_shared<RangeQuery>(*query);
  digest_query->digest = true;
  AskPeer<RangeBatch> ask = [self, query, digest_query, block_for, trace = consistency.trace](
                                const Peer& peer, size_t index, int64_t timeout,
                                std::function<void(Result<RangeBatch>)> answered) {
    if (peer.info.local) {
      if (!query->internal) self->services_->db->CountReplicaRequest(self->table_->id, self->start_, /*write=*/false);
      return answered(ReadRangeLocal(self->services_->db->engine(), self->table_->id, *query));
    }
    const bool digest = index > 0 && index < block_for;
    self->services_->client->ReadRange(peer.endpoint, digest ? *digest_query : *query, timeout, trace,
                                       std::move(answered));
  };
  AskedDone<RangeBatch> finished = [self, fence, query, consistency, done = std::move(done)](
                                       Result<std::vector<RangeBatch>> answers, std::vector<Peer>) mutable {
    if (!answers.ok()) return done(answers.status());
    ++self->services_->digest_reads;
    if (RangeBatch* data = AgreedWindow(*answers)) {
      return done(AgreedAsWindow(self->table_->id, query->keys.size(), std::move(*data)));
    }
    ++self->services_->digest_mismatches;
    if (consistency.trace) TraceStep(consistency, "Digest mismatch: reading data from every replica asked");
    self->ReadWindowInFullAsync(query, consistency, /*counted=*/true, std::move(done));
  };
  std::make_shared<ParallelAsk<RangeBatch>>(services_, PeersOf(asked), plan, SpeculativeThresholdMicros(), consistency,
                                            std::move(ask), std::move(finished), kRangeMessage)
      ->Start();
}

void ReplicatedTablet::ReadWindowInFullAsync(std::shared_ptr<const RangeQuery> query,
                                             const RequestConsistency& consistency, bool counted, WindowDone done) {
  auto fence = std::make_shared<PlacementFence::RequestGuard>(&services_->placement_fence);
  auto replicas = PlanRead(consistency.level);
  if (!replicas.ok()) return done(replicas.status());
  if (!counted) CountCoordinated((*replicas)->all);
  auto self = shared_from_this();
  // Data from every replica asked, as a range read's window (ReadWindow),
  // with the point keys' values in the same answer.
  AskPeer<RangeBatch> ask = [self, query, trace = consistency.trace](const Peer& peer, size_t, int64_t timeout,
                                                                    std::function<void(Result<RangeBatch>)> answered) {
    if (peer.info.local) {
      if (!query->internal) self->services_->db->CountReplicaRequest(self->table_->id, self->start_, /*write=*/false);
      return answered(ReadRangeLocal(self->services_->db->engine(), self->table_->id, *query));
    }
    self->services_->client->ReadRange(peer.endpoint, *query, timeout, trace, std::move(answered));
  };
  AskedDone<RangeBatch> finished = [self, fence, query, consistency, done = std::move(done)](
                                       Result<std::vector<RangeBatch>> answers, std::vector<Peer> asked) {
    if (!answers.ok()) return done(answers.status());
    std::vector<WriteSet> repairs;
    auto window = ReconcileRangeAnswers(self->table_->id, query->reverse, *answers, &repairs);
    if (!window.ok()) return done(window.status());
    auto out = std::make_shared<KeyWindow>(std::move(window).value());
    if (Status keys = ReconcileWindowKeys(query->keys, *answers, out.get(), &repairs); !keys.ok()) {
      return done(keys);
    }
    RepairAsync(self->services_, self->table_, asked, repairs, consistency, [out, fence, done](Status repaired) {
      if (!repaired.ok()) return done(repaired);
      done(std::move(*out));
    });
  };
  std::make_shared<ParallelAsk<RangeBatch>>(services_, PeersOf((*replicas)->asked), (*replicas)->plan,
                                            SpeculativeThresholdMicros(), consistency, std::move(ask),
                                            std::move(finished), kRangeMessage)
      ->Start();
}

}  // namespace tessera::cluster
