#include "cluster/paxos_coordinator.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "cluster/paxos_ballot.h"
#include "cluster/replicated_tablet.h"
#include "cluster/replica_service.h"
#include "common/blocking_wait.h"
#include "common/steady_micros.h"

namespace tessera::cluster {
namespace {

// Cassandra's contention back-off: a random pause of up to 100 ms before a
// round that lost to a later ballot tries again.
int64_t BackOffMicros(int attempt) {
  thread_local std::mt19937 random(std::random_device{}());
  const int ceiling_ms = std::min(100, 5 << std::min(attempt, 5));
  return 1000 * static_cast<int64_t>(std::uniform_int_distribution<int>(1, ceiling_ms)(random));
}

// A refusal or an error that says the replica did not act (as opposed to no
// answer, after which it may have).
bool DefinitelyNot(const Result<PaxosResponse>& r) {
  if (r.ok()) return !r->ok;
  return r.status().code() != Status::Code::kBusy;
}

}  // namespace

// The answers of one phase; shared with the transport's callbacks, which
// may come after `then` ran.
struct PaxosCoordinator::Exchange {
  std::mutex mu;
  std::vector<std::optional<Result<PaxosResponse>>> answers;
  int sent = 0, answered = 0, oks = 0, refusals = 0;
  Enough enough;
  Then then;
  bool armed = false;  // every participant sent to: `sent` is final

  explicit Exchange(size_t n) : answers(n) {}
  void Record(size_t i, Result<PaxosResponse> r) {
    std::unique_lock<std::mutex> lock(mu);
    oks += r.ok() && r->ok;
    refusals += r.ok() && !r->ok;
    answers[i] = std::move(r);
    ++answered;
    MaybeFinish(lock);
  }
  void Arm(int sent_to) {
    std::unique_lock<std::mutex> lock(mu);
    sent = sent_to;
    armed = true;
    MaybeFinish(lock);
  }
  // Runs `then` (once, without the lock) when the exchange is complete.
  void MaybeFinish(std::unique_lock<std::mutex>& lock) {
    if (!armed || !then || !(answered >= sent || enough(*this))) return;
    Then run = std::move(then);
    then = nullptr;
    lock.unlock();
    run(*this);
  }
};

// One PrepareAsync: its attempts so far and its answer.
struct PaxosCoordinator::PrepareState {
  RequestConsistency report;
  Status::Code timeout_code = Status::Code::kWriteTimeout;
  int64_t deadline = 0;
  int64_t seen_micros = 0;
  int attempt = 0;
  PrepareDone done;

  void TimedOut(int received, int required) {
    done(ConsistencyTimeout(timeout_code, report, received, required, false));
  }
};

PaxosCoordinator::PaxosCoordinator(ReplicationServices* services, std::string table_uuid, std::string partition,
                                   std::vector<PaxosParticipant> participants, int required)
    : services_(services),
      table_uuid_(std::move(table_uuid)),
      partition_(std::move(partition)),
      participants_(std::move(participants)),
      required_(required) {}

std::vector<size_t> PaxosCoordinator::All() const {
  std::vector<size_t> all(participants_.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

void PaxosCoordinator::Send(PaxosRequest::Phase phase, const std::string& ballot, const WriteSet& update,
                            const std::vector<size_t>& to, Enough enough, Then then) {
  round_trips_.fetch_add(1, std::memory_order_acq_rel);
  auto exchange = std::make_shared<Exchange>(participants_.size());
  exchange->enough = std::move(enough);
  exchange->then = std::move(then);
  PaxosRequest request;
  request.phase = phase;
  request.table_uuid = table_uuid_;
  request.partition = partition_;
  request.ballot = ballot;
  request.update = update;
  std::optional<size_t> local;
  for (size_t i : to) {
    const PaxosParticipant& p = participants_[i];
    if (p.local) {
      local = i;
      continue;
    }
    ReplicaLatency* latency = &services_->latency;
    latency->Sent(p.host_id);
    // A replica that fails a commit or does not answer it gets the update
    // as a hint, even when the level was reached without it.
    std::shared_ptr<HintStore> hints = phase == PaxosRequest::Phase::kCommit ? services_->hints : nullptr;
    services_->client->Paxos(p.endpoint, request, services_->write_timeout_micros,
                             [exchange, i, latency, hints, update = hints ? update : WriteSet(), uuid = table_uuid_,
                              host = p.host_id, at = SteadyMicros()](Result<PaxosResponse> r) {
                               const int64_t now = SteadyMicros();
                               latency->Answered(host, now - at, r.ok(), now);
                               if (hints && !(r.ok() && r->ok)) (void)hints->Store(host, uuid, update);
                               exchange->Record(i, std::move(r));
                             });
  }
  if (local) {
    exchange->Record(*local, services_->local_replica_service
                                 ? services_->local_replica_service->Paxos(request)
                                 : Result<PaxosResponse>(Status::NotFound("no local replica service")));
  }
  // Answers that came before wait for this: only now is `sent` known.
  exchange->Arm(static_cast<int>(to.size()));
}

void PaxosCoordinator::PrepareAsync(ConsistencyLevel serial, bool for_read, PrepareDone done) {
  auto state = std::make_shared<PrepareState>();
  state->report = RequestConsistency{serial, for_read ? WriteType::kSimple : WriteType::kCas};
  state->timeout_code = for_read ? Status::Code::kReadTimeout : Status::Code::kWriteTimeout;
  state->deadline = SteadyMicros() + services_->write_timeout_micros;
  state->done = std::move(done);
  finished_.clear();
  PrepareAttempt(std::move(state));
}

void PaxosCoordinator::PrepareAttempt(std::shared_ptr<PrepareState> state) {
  if (state->attempt > 0 && SteadyMicros() > state->deadline) return state->TimedOut(0, required_);
  const std::string ballot = services_->ballot_clock->Next(state->seen_micros);
  const int required = required_;
  Send(
      PaxosRequest::Phase::kPrepare, ballot, WriteSet(), All(),
      [required](const Exchange& e) { return e.oks >= required || e.refusals > e.sent - required; },
      [self = shared_from_this(), state, ballot](Exchange& prepare) { self->OnPromises(state, ballot, prepare); });
}

void PaxosCoordinator::BackOff(std::shared_ptr<PrepareState> state) {
  const int64_t pause = BackOffMicros(state->attempt);
  ++state->attempt;
  if (services_->delayed_calls &&
      services_->delayed_calls->After(pause, [self = shared_from_this(), state] { self->PrepareAttempt(state); }) != 0) {
    return;
  }
  // No timers (or stopping): pause here.
  std::this_thread::sleep_for(std::chrono::microseconds(pause));
  PrepareAttempt(std::move(state));
}

void PaxosCoordinator::OnPromises(std::shared_ptr<PrepareState> state, const std::string& ballot, Exchange& prepare) {
  std::vector<PaxosResponse> promises;
  std::vector<size_t> promised_by;
  bool refused = false;
  {
    std::lock_guard<std::mutex> lock(prepare.mu);
    for (size_t i = 0; i < prepare.answers.size(); ++i) {
      const auto& a = prepare.answers[i];
      if (!a || !a->ok()) continue;
      if ((*a)->ok) {
        promises.push_back(**a);
        promised_by.push_back(i);
      } else {
        refused = true;
        state->seen_micros = std::max(state->seen_micros, BallotMicros((*a)->promised));
      }
    }
  }
  if (static_cast<int>(promises.size()) < required_) {
    if (refused) return BackOff(std::move(state));
    return state->TimedOut(static_cast<int>(promises.size()), required_);
  }
  // The newest commit any promiser knows, and the newest proposal accepted after it.
  const PaxosResponse* latest = nullptr;
  const PaxosResponse* in_progress = nullptr;
  for (const auto& p : promises) {
    if (!latest || CompareBallots(p.committed_ballot, latest->committed_ballot) > 0) latest = &p;
  }
  for (const auto& p : promises) {
    if (CompareBallots(p.accepted_ballot, latest->committed_ballot) > 0 &&
        (!in_progress || CompareBallots(p.accepted_ballot, in_progress->accepted_ballot) > 0)) {
      in_progress = &p;
    }
  }
  auto self = shared_from_this();
  if (in_progress) {
    // Finish it under this ballot (Cassandra: "Finishing incomplete paxos
    // round"), then start a round of our own.
    auto update = std::make_shared<const WriteSet>(in_progress->accepted_update);
    Propose(ballot, *update, [self, state, ballot, update, accepted = in_progress->accepted_ballot](Proposal p,
                                                                                                   int64_t seen) {
      state->seen_micros = std::max(state->seen_micros, seen);
      switch (p) {
        case Proposal::kAccepted:
          self->Commit(ballot, *update, self->All(), self->required_, [self, state, accepted](int acks) {
            if (acks < self->required_) return state->TimedOut(acks, self->required_);
            self->finished_.push_back(accepted);
            ++state->attempt;
            self->PrepareAttempt(state);
          });
          return;
        case Proposal::kRefused:
          return self->BackOff(state);
        case Proposal::kUnknown:
          return state->TimedOut(0, self->required_);
      }
    });
    return;
  }
  // Replicas behind the newest commit get it before anyone reads.
  std::vector<size_t> behind;
  for (size_t k = 0; k < promises.size(); ++k) {
    if (CompareBallots(promises[k].committed_ballot, latest->committed_ballot) < 0) behind.push_back(promised_by[k]);
  }
  const std::string committed = latest->committed_ballot;
  if (behind.empty()) {
    last_commit_ = committed;
    return state->done(ballot);
  }
  const int promised = static_cast<int>(promises.size());
  const int needed = static_cast<int>(behind.size());
  Commit(committed, latest->committed_update, behind, needed,
         [self, state, ballot, committed, promised, needed](int acks) {
           if (acks < needed) return state->TimedOut(promised - 1, self->required_);
           self->last_commit_ = committed;
           state->done(ballot);
         });
}

void PaxosCoordinator::Propose(const std::string& ballot, const WriteSet& update,
                               std::function<void(Proposal, int64_t seen_micros)> done) {
  const int required = required_;
  Send(
      PaxosRequest::Phase::kPropose, ballot, update, All(), [required](const Exchange& e) { return e.oks >= required; },
      [required, done = std::move(done)](Exchange& propose) {
        int64_t seen = 0;
        Proposal outcome;
        {
          std::lock_guard<std::mutex> lock(propose.mu);
          if (propose.oks >= required) {
            outcome = Proposal::kAccepted;
          } else {
            bool every_one_did_not = propose.oks == 0;
            for (const auto& a : propose.answers) {
              if (!a) continue;  // not sent, or not answered (counted below)
              every_one_did_not = every_one_did_not && DefinitelyNot(*a);
              if (a->ok() && !(*a)->ok) seen = std::max(seen, BallotMicros((*a)->promised));
            }
            // Participants that never answered may have accepted.
            if (propose.answered < propose.sent) every_one_did_not = false;
            outcome = every_one_did_not ? Proposal::kRefused : Proposal::kUnknown;
          }
        }
        done(outcome, seen);
      });
}

void PaxosCoordinator::Commit(const std::string& ballot, const WriteSet& update, const std::vector<size_t>& to,
                              int block_for, std::function<void(int acknowledged)> done) {
  Send(
      PaxosRequest::Phase::kCommit, ballot, update, to, [block_for](const Exchange& e) { return e.oks >= block_for; },
      [done = std::move(done)](Exchange& commit) {
        int oks = 0;
        {
          std::lock_guard<std::mutex> lock(commit.mu);
          oks = commit.oks;
        }
        done(oks);
      });
}

void PaxosCoordinator::ProposeAndCommitAsync(std::string ballot, WriteSet update, RequestConsistency commit,
                                             int commit_block_for, ConsistencyLevel serial, ProposeDone done) {
  auto self = shared_from_this();
  auto written = std::make_shared<const WriteSet>(std::move(update));
  Propose(ballot, *written, [self, ballot, written, commit, commit_block_for, serial, done = std::move(done)](
                                Proposal p, int64_t /*seen*/) mutable {
    switch (p) {
      case Proposal::kAccepted:
        break;
      case Proposal::kRefused:
        return done(Status::OK(), /*preempted=*/true);
      case Proposal::kUnknown:
        return self->Resolve(ballot, commit, serial, std::move(done));
    }
    self->Commit(ballot, *written, self->All(), commit_block_for,
                 [commit, commit_block_for, done = std::move(done)](int acks) {
                   if (acks >= commit_block_for) return done(Status::OK(), false);
                   done(ConsistencyTimeout(Status::Code::kWriteTimeout,
                                           RequestConsistency{commit.level, WriteType::kSimple}, acks,
                                           commit_block_for, false),
                        false);
                 });
  });
}

void PaxosCoordinator::Resolve(const std::string& ballot, const RequestConsistency& commit, ConsistencyLevel serial,
                               ProposeDone done) {
  const Status unknown = ConsistencyTimeout(Status::Code::kWriteTimeout,
                                            RequestConsistency{commit.level, WriteType::kCas}, 0, required_, false);
  auto self = shared_from_this();
  PrepareAsync(serial, /*for_read=*/false, [self, ballot, unknown, done = std::move(done)](Result<std::string> next) {
    if (!next.ok()) return done(unknown, false);
    // Finished by this prepare: applied, and committed on `required_` replicas.
    if (std::find(self->finished_.begin(), self->finished_.end(), ballot) != self->finished_.end()) {
      return done(Status::OK(), false);
    }
    // A commit after it: another round may have finished it first, or not.
    if (CompareBallots(self->last_commit_, ballot) > 0) return done(unknown, false);
    // No commit after it, and no promiser holds it: an empty commit under the
    // new ballot makes sure no later round finishes it.
    const std::string empty_ballot = *next;
    self->Propose(empty_ballot, WriteSet(), [self, empty_ballot, unknown, done](Proposal p, int64_t /*seen*/) {
      if (p != Proposal::kAccepted) return done(unknown, false);
      self->Commit(empty_ballot, WriteSet(), self->All(), self->required_, [self, unknown, done](int acks) {
        if (acks < self->required_) return done(unknown, false);
        done(Status::OK(), /*preempted=*/true);
      });
    });
  });
}

Result<std::string> PaxosCoordinator::Prepare(ConsistencyLevel serial, bool for_read) {
  return WaitFor<Result<std::string>>([&](PrepareDone done) { PrepareAsync(serial, for_read, std::move(done)); });
}

Status PaxosCoordinator::ProposeAndCommit(const std::string& ballot, const WriteSet& update,
                                          const RequestConsistency& commit, int commit_block_for,
                                          ConsistencyLevel serial, bool* preempted) {
  using Outcome = std::pair<Status, bool>;
  Outcome outcome = WaitFor<Outcome>([&](std::function<void(Outcome)> done) {
    ProposeAndCommitAsync(ballot, update, commit, commit_block_for, serial,
                          [done = std::move(done)](Status s, bool p) { done({std::move(s), p}); });
  });
  *preempted = outcome.second;
  return outcome.first;
}

}  // namespace tessera::cluster
