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
// Blocking: the calling thread waits for the replicas (the request path is
// synchronous; issue 28 turns it into coroutines).
// Thread safety: one object per request; the services are shared.
#pragma once

#include <cstdint>
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

class PaxosCoordinator {
 public:
  // `participants`: the live replicas taking part; `required`: promises and
  // acceptances needed. `partition`: table-relative.
  PaxosCoordinator(ReplicationServices* services, std::string table_uuid, std::string partition,
                   std::vector<PaxosParticipant> participants, int required);

  // The promised ballot, once any round left in progress is finished.
  // `serial`: for error reports; `for_read`: a SERIAL read (ReadTimeout).
  Result<std::string> Prepare(ConsistencyLevel serial, bool for_read);
  // `commit_block_for`: acknowledgements the commit needs (its level's);
  // `serial`: the round's level, for error reports.
  Status ProposeAndCommit(const std::string& ballot, const WriteSet& update, const RequestConsistency& commit,
                          int commit_block_for, ConsistencyLevel serial, bool* preempted);

  // Replica round trips this coordinator made (each phase sent to every
  // participant counts once), for the benchmark's count of round trips per
  // statement.
  int round_trips() const { return round_trips_; }

 private:
  struct Exchange;
  enum class Proposal { kAccepted, kRefused, kUnknown };
  // Sends one phase to every participant (this node's directly).
  std::shared_ptr<Exchange> Send(PaxosRequest::Phase phase, const std::string& ballot, const WriteSet& update,
                                 const std::vector<size_t>& to);
  Proposal Propose(const std::string& ballot, const WriteSet& update, int64_t* seen_micros);
  // Commits to `to`; the number that acknowledged.
  int Commit(const std::string& ballot, const WriteSet& update, const std::vector<size_t>& to, int block_for);
  std::vector<size_t> All() const;
  // After a proposal of unknown outcome: applied (OK), preempted, or WriteTimeout CAS.
  Status Resolve(const std::string& ballot, const RequestConsistency& commit, ConsistencyLevel serial,
                 bool* preempted);

  ReplicationServices* services_;
  std::string table_uuid_, partition_;
  std::vector<PaxosParticipant> participants_;
  int required_;
  int round_trips_ = 0;
  // What the last Prepare saw: the proposals it finished, the newest commit.
  std::vector<std::string> finished_;
  std::string last_commit_;
};

}  // namespace tessera::cluster
