#include "cluster/paxos_coordinator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "cluster/paxos_ballot.h"
#include "cluster/replicated_tablet.h"
#include "cluster/replica_service.h"
#include "common/steady_micros.h"

namespace tessera::cluster {
namespace {

// Cassandra's contention back-off: a random pause of up to 100 ms before a
// round that lost to a later ballot tries again.
void BackOff(int attempt) {
  thread_local std::mt19937 random(std::random_device{}());
  const int ceiling_ms = std::min(100, 5 << std::min(attempt, 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(1, ceiling_ms)(random)));
}

// A refusal or an error that says the replica did not act (as opposed to no
// answer, after which it may have).
bool DefinitelyNot(const Result<PaxosResponse>& r) {
  if (r.ok()) return !r->ok;
  return r.status().code() != Status::Code::kBusy;
}

}  // namespace

// The answers of one phase; shared with the transport's callbacks, which
// may outlive the wait.
struct PaxosCoordinator::Exchange {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<Result<PaxosResponse>>> answers;
  int sent = 0, answered = 0, oks = 0, refusals = 0;

  explicit Exchange(size_t n) : answers(n) {}
  void Record(size_t i, Result<PaxosResponse> r) {
    std::lock_guard<std::mutex> lock(mu);
    oks += r.ok() && r->ok;
    refusals += r.ok() && !r->ok;
    answers[i] = std::move(r);
    ++answered;
    cv.notify_all();
  }
  // Waits until `done` holds (under the lock), every participant sent to
  // answered, or the time-out.
  template <typename Done>
  void Wait(int64_t timeout_micros, Done done) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::microseconds(timeout_micros), [&] { return done() || answered >= sent; });
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

std::shared_ptr<PaxosCoordinator::Exchange> PaxosCoordinator::Send(PaxosRequest::Phase phase,
                                                                   const std::string& ballot, const WriteSet& update,
                                                                   const std::vector<size_t>& to) {
  ++round_trips_;
  auto exchange = std::make_shared<Exchange>(participants_.size());
  exchange->sent = static_cast<int>(to.size());
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
  return exchange;
}

Result<std::string> PaxosCoordinator::Prepare(ConsistencyLevel serial, bool for_read) {
  const RequestConsistency report{serial, for_read ? WriteType::kSimple : WriteType::kCas};
  const Status::Code timeout_code = for_read ? Status::Code::kReadTimeout : Status::Code::kWriteTimeout;
  const int64_t deadline = SteadyMicros() + services_->write_timeout_micros;
  int64_t seen_micros = 0;
  finished_.clear();
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0 && SteadyMicros() > deadline) {
      return ConsistencyTimeout(timeout_code, report, 0, required_, false);
    }
    const std::string ballot = services_->ballot_clock->Next(seen_micros);
    auto prepare = Send(PaxosRequest::Phase::kPrepare, ballot, WriteSet(), All());
    const int sent = prepare->sent;
    prepare->Wait(services_->write_timeout_micros,
                  [&] { return prepare->oks >= required_ || prepare->refusals > sent - required_; });
    std::vector<PaxosResponse> promises;
    std::vector<size_t> promised_by;
    bool refused = false;
    {
      std::lock_guard<std::mutex> lock(prepare->mu);
      for (size_t i = 0; i < prepare->answers.size(); ++i) {
        const auto& a = prepare->answers[i];
        if (!a || !a->ok()) continue;
        if ((*a)->ok) {
          promises.push_back(**a);
          promised_by.push_back(i);
        } else {
          refused = true;
          seen_micros = std::max(seen_micros, BallotMicros((*a)->promised));
        }
      }
    }
    if (static_cast<int>(promises.size()) < required_) {
      if (refused) {
        BackOff(attempt);
        continue;
      }
      return ConsistencyTimeout(timeout_code, report, static_cast<int>(promises.size()), required_, false);
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
    if (in_progress) {
      // Finish it under this ballot (Cassandra: "Finishing incomplete paxos
      // round"), then start a round of our own.
      const WriteSet update = in_progress->accepted_update;
      switch (Propose(ballot, update, &seen_micros)) {
        case Proposal::kAccepted: {
          const int acks = Commit(ballot, update, All(), required_);
          if (acks < required_) return ConsistencyTimeout(timeout_code, report, acks, required_, false);
          finished_.push_back(in_progress->accepted_ballot);
          continue;
        }
        case Proposal::kRefused:
          BackOff(attempt);
          continue;
        case Proposal::kUnknown:
          return ConsistencyTimeout(timeout_code, report, 0, required_, false);
      }
    }
    // Replicas behind the newest commit get it before anyone reads.
    std::vector<size_t> behind;
    for (size_t k = 0; k < promises.size(); ++k) {
      if (CompareBallots(promises[k].committed_ballot, latest->committed_ballot) < 0) behind.push_back(promised_by[k]);
    }
    if (!behind.empty()) {
      const int acks = Commit(latest->committed_ballot, latest->committed_update, behind,
                              static_cast<int>(behind.size()));
      if (acks < static_cast<int>(behind.size())) {
        return ConsistencyTimeout(timeout_code, report, static_cast<int>(promises.size()) - 1, required_, false);
      }
    }
    last_commit_ = latest->committed_ballot;
    return ballot;
  }
}

PaxosCoordinator::Proposal PaxosCoordinator::Propose(const std::string& ballot, const WriteSet& update,
                                                     int64_t* seen_micros) {
  auto propose = Send(PaxosRequest::Phase::kPropose, ballot, update, All());
  propose->Wait(services_->write_timeout_micros, [&] { return propose->oks >= required_; });
  std::lock_guard<std::mutex> lock(propose->mu);
  if (propose->oks >= required_) return Proposal::kAccepted;
  bool every_one_did_not = propose->oks == 0;
  for (const auto& a : propose->answers) {
    if (!a) continue;  // not sent, or not answered (counted below)
    every_one_did_not = every_one_did_not && DefinitelyNot(*a);
    if (a->ok() && !(*a)->ok) *seen_micros = std::max(*seen_micros, BallotMicros((*a)->promised));
  }
  // Participants that never answered may have accepted.
  if (propose->answered < propose->sent) every_one_did_not = false;
  return every_one_did_not ? Proposal::kRefused : Proposal::kUnknown;
}

int PaxosCoordinator::Commit(const std::string& ballot, const WriteSet& update, const std::vector<size_t>& to,
                             int block_for) {
  auto commit = Send(PaxosRequest::Phase::kCommit, ballot, update, to);
  commit->Wait(services_->write_timeout_micros, [&] { return commit->oks >= block_for; });
  std::lock_guard<std::mutex> lock(commit->mu);
  return commit->oks;
}

Status PaxosCoordinator::ProposeAndCommit(const std::string& ballot, const WriteSet& update,
                                          const RequestConsistency& commit, int commit_block_for,
                                          ConsistencyLevel serial, bool* preempted) {
  *preempted = false;
  int64_t seen = 0;
  switch (Propose(ballot, update, &seen)) {
    case Proposal::kAccepted:
      break;
    case Proposal::kRefused:
      *preempted = true;
      return Status::OK();
    case Proposal::kUnknown:
      return Resolve(ballot, commit, serial, preempted);
  }
  const int acks = Commit(ballot, update, All(), commit_block_for);
  if (acks < commit_block_for) {
    return ConsistencyTimeout(Status::Code::kWriteTimeout, RequestConsistency{commit.level, WriteType::kSimple}, acks,
                              commit_block_for, false);
  }
  return Status::OK();
}

Status PaxosCoordinator::Resolve(const std::string& ballot, const RequestConsistency& commit, ConsistencyLevel serial,
                                 bool* preempted) {
  const Status unknown = ConsistencyTimeout(Status::Code::kWriteTimeout,
                                            RequestConsistency{commit.level, WriteType::kCas}, 0, required_, false);
  auto next = Prepare(serial, /*for_read=*/false);
  if (!next.ok()) return unknown;
  // Finished by this prepare: applied, and committed on `required_` replicas.
  if (std::find(finished_.begin(), finished_.end(), ballot) != finished_.end()) return Status::OK();
  // A commit after it: another round may have finished it first, or not.
  if (CompareBallots(last_commit_, ballot) > 0) return unknown;
  // No commit after it, and no promiser holds it: an empty commit under the
  // new ballot makes sure no later round finishes it.
  int64_t seen = 0;
  if (Propose(*next, WriteSet(), &seen) != Proposal::kAccepted) return unknown;
  if (Commit(*next, WriteSet(), All(), required_) < required_) return unknown;
  *preempted = true;
  return Status::OK();
}

}  // namespace tessera::cluster
