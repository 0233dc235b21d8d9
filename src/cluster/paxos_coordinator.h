// The coordinator's side of Paxos on one partition (issue 30): Cassandra's
// Paxos v1 (StorageProxy.cas / beginAndRepairPaxos, Cassandra 4.1), which
// ScyllaDB's LWT follows, over the partition's live replicas:
//
//   Prepare: a new ballot (cluster/paxos_ballot.h) to every participant;
//     `required` promises are needed (a quorum of the natural replicas, at
//     SERIAL or LOCAL_SERIAL, plus every pending one). A refusal means a
//     later ballot won: back off (randomized, up to 100 ms) and try with a
//     later ballot, until the contention deadline. Then, from the promises:
//     an accepted proposal newer than the last commit is finished first
//     (proposed again with this ballot and committed; then a new round
//     begins), and replicas whose last commit is older than the newest one
//     get it (so that a quorum read after the round sees it).
//   ProposeAndCommit: the update to every participant; `required`
//     acceptances, then the commit to every participant, acknowledged by
//     as many as the statement's consistency level needs (a replica that is
//     down or does not answer gets a hint).
//
// Outcomes: a proposal every participant refused is `preempted` (nothing
// was accepted: the statement may run again). One that some accepted but
// fewer than `required` (a later round's prepare overtook it) would be a
// WriteTimeout CAS in Cassandra's Paxos v1; here a new round finds out
// first: its prepare finishes the proposal if a promiser holds it
// (applied); when no promiser holds it and nothing was committed after it,
// a commit of an empty update under the new ballot makes sure no later
// round finishes it (preempted). Otherwise (a commit after it: another
// round may have finished it) the outcome is unknown: WriteTimeout CAS.
// Prepare failures: WriteTimeout CAS for a write, ReadTimeout for a SERIAL
// read. Commit short of its level: WriteTimeout SIMPLE (the proposal was
// accepted: it will be committed by the next round).
//
// Asynchronous (issue 28 item 1): PrepareAsync and ProposeAndCommitAsync
// return once the phase is sent; each phase continues from the thread of
// the replica answer that completes it (or of this node's own replica,
// answered on the calling thread), and the contention back-off waits on
// ReplicationServices::delayed_calls, not on a thread (without it, on the
// calling thread, as tests without timers do). Every remote call ends by
// its time-out (the transport's contract), so `done` always runs, exactly
// once. Prepare and ProposeAndCommit are the blocking forms: they wait for
// the asynchronous ones (a SERIAL read, a caller that holds its thread).
// A phase asks this node's replica directly, on the thread that starts the
// phase (a RocksDB read and write of its Paxos state): after a back-off
// that is the DelayedCalls thread, whose other calls wait that long.
// Thread safety: one object per request, owned by a shared_ptr (the
// asynchronous calls keep it alive until `done`); one call at a time. The
// services are shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/paxos_state.h"
#include "common/status.h"
#include "tablets/request_consistency.h"

namespace tessera::cluster {

struct ReplicationServices;

struct PaxosParticipant {
  std::string host_id;   // 16 bytes
  std::string endpoint;  // "address:port"; empty: this node
  bool local = false;
};

class PaxosCoordinator : public std::enable_shared_from_this<PaxosCoordinator> {
 public:
  // `participants`: the live replicas taking part; `required`: promises and
  // acceptances needed. `partition`: table-relative.
  PaxosCoordinator(ReplicationServices* services, std::string table_uuid, std::string partition,
                   std::vector<PaxosParticipant> participants, int required);

  // The promised ballot, once any round left in progress is finished.
  // `serial`: for error reports; `for_read`: a SERIAL read (ReadTimeout).
  using PrepareDone = std::function<void(Result<std::string> ballot)>;
  void PrepareAsync(ConsistencyLevel serial, bool for_read, PrepareDone done);
  // `commit_block_for`: acknowledgements the commit needs (its level's);
  // `serial`: the round's level, for error reports. `preempted`: the
  // proposal was refused by every participant (the Status is then OK).
  using ProposeDone = std::function<void(Status status, bool preempted)>;
  void ProposeAndCommitAsync(std::string ballot, WriteSet update, RequestConsistency commit, int commit_block_for,
                             ConsistencyLevel serial, ProposeDone done);

  // The blocking forms. REQUIRES: not called from a transport thread or the
  // DelayedCalls thread (their answers could need it).
  [[nodiscard]] Result<std::string> Prepare(ConsistencyLevel serial, bool for_read);
  [[nodiscard]] Status ProposeAndCommit(const std::string& ballot, const WriteSet& update,
                                        const RequestConsistency& commit, int commit_block_for,
                                        ConsistencyLevel serial, bool* preempted);

  // Replica round trips this coordinator made (each phase sent to every
  // participant counts once), for the benchmark's count of round trips per
  // statement. Read once `done` ran.
  int round_trips() const { return round_trips_.load(std::memory_order_acquire); }

 private:
  struct Exchange;
  struct PrepareState;
  enum class Proposal { kAccepted, kRefused, kUnknown };
  // What an exchange is complete with, checked under its lock after each
  // answer (or once every participant answered, or was not sent to).
  using Enough = std::function<bool(const Exchange&)>;
  using Then = std::function<void(Exchange&)>;
  // Sends one phase to `to` (this node's directly); `then` runs once,
  // when `enough` holds or every participant sent to answered.
  void Send(PaxosRequest::Phase phase, const std::string& ballot, const WriteSet& update,
            const std::vector<size_t>& to, Enough enough, Then then);
  void PrepareAttempt(std::shared_ptr<PrepareState> state);
  void OnPromises(std::shared_ptr<PrepareState> state, const std::string& ballot, Exchange& prepare);
  // Waits a random back-off after a refusal, then tries again.
  void BackOff(std::shared_ptr<PrepareState> state);
  void Propose(const std::string& ballot, const WriteSet& update,
               std::function<void(Proposal, int64_t seen_micros)> done);
  // Commits to `to`; `done` gets the number that acknowledged.
  void Commit(const std::string& ballot, const WriteSet& update, const std::vector<size_t>& to, int block_for,
              std::function<void(int acknowledged)> done);
  std::vector<size_t> All() const;
  // After a proposal of unknown outcome: applied (OK), preempted, or WriteTimeout CAS.
  void Resolve(const std::string& ballot, const RequestConsistency& commit, ConsistencyLevel serial,
               ProposeDone done);

  ReplicationServices* services_;
  std::string table_uuid_, partition_;
  std::vector<PaxosParticipant> participants_;
  int required_;
  std::atomic<int> round_trips_{0};
  // What the last Prepare saw: the proposals it finished, the newest commit.
  // Written by one step at a time (each after the answers of the one before).
  std::vector<std::string> finished_;
  std::string last_commit_;
};

}  // namespace tessera::cluster
