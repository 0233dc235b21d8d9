// Lightweight transactions on one node: INSERT ... IF NOT EXISTS, UPDATE and
// DELETE ... IF EXISTS and IF conditions (=, !=, <, <=, >, >=, IN on
// columns, map entries m['k'] and list elements l[i]) and conditional
// BATCH on one partition, with Cassandra 4.1's
// semantics and result (ModificationStatement's CAS path):
//  - the statement must name one partition, and one row unless it only
//    touches static columns or deletes the partition;
//  - the result is a row whose first column is [applied] (boolean); when
//    not applied and the row exists, the row's columns follow (IF NOT
//    EXISTS: all of them, in SELECT * order; IF conditions: the columns the
//    conditions name, in table order); a missing row gives [applied] alone;
//  - `IF col = null` holds for a null column and for a missing row; an
//    ordering operator against a missing value is false.
// Linearizable among conditional statements (ordinary writes do not take
// part, as in Cassandra):
//  - on a cluster, through Paxos on the partition's replicas (issue 30;
//    Coordinator::BeginPaxosAsync, cluster/paxos_coordinator.h): prepare at the
//    statement's serial consistency (SERIAL or LOCAL_SERIAL), read the
//    current row at QUORUM (LOCAL_QUORUM), check, then propose and commit
//    the write, timed by the ballot, at the statement's consistency level.
//    A proposal every replica refused (a later round won) runs the whole
//    statement again, up to kMaxPreemptions times;
//  - on one node, under the partition's lock (PartitionLocks, one per
//    partition); the write takes this node's clock as its timestamp.
// Either way the client's default timestamp is ignored, as Cassandra times
// the write by the ballot.
// Asynchronous (issue 28 item 1): RunAsync is a chain of steps, each started
// from the thread of the answer before it (the prepare's, the reads', the
// accept and commit rounds'), so no thread waits for a replica; the
// contention back-off waits on a timer (cluster/paxos_coordinator.h). Run
// waits for it, for callers that hold their thread. Building the writes
// runs first, on the calling thread: a list operation that reads before it
// writes (WriteContext::read_before_write) reads there.
//
// Errors: InvalidArgument in Cassandra's words (IN on the partition key,
// counters, conditions on key columns, ...), and those of building the
// write and of `apply`.
//
// Thread safety: thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "coordinator/coordinator.h"
#include "coordinator/partition_locks.h"
#include "cql/executor/modification_statements.h"
#include "cql/executor/result_set.h"

namespace tessera::cql {

class ConditionalWrites {
 public:
  // REQUIRES: coordinator outlives this.
  explicit ConditionalWrites(Coordinator* coordinator) : coordinator_(coordinator), db_(&coordinator->database()) {}
  // INSERT ... IF NOT EXISTS, UPDATE / DELETE with IF EXISTS or IF conditions.
  static bool IsConditional(const RawStatement& statement);
  // Writes the mutations (with the guardrails) at the given consistency (the
  // request's level, write type CAS, and the Paxos round on a cluster) and
  // answers `done` once. REQUIRES: through.paxos outlives that call.
  using ApplyFn = std::function<void(std::vector<Mutation> mutations, const RequestConsistency& through,
                                     std::function<void(Status)> done)>;
  using ResultDone = std::function<void(Result<ResultSet>)>;
  static constexpr int kMaxPreemptions = 20;
  // A conditional statement (one statement, batch false) or a BATCH with
  // conditions: every statement on one partition of one table; applied all
  // together when every condition holds. When not, one row per checked row
  // that exists (whether its own condition held or not), under [applied]
  // and the union of the columns shown. contexts[i] binds statements[i]; the
  // values they point to are copied (needed only during the call). `apply`
  // runs when the conditions hold; `done` runs exactly once, with the
  // [applied] rows. REQUIRES: one statement at least; for one statement,
  // IsConditional(statement).
  void RunAsync(std::vector<RawStatement> statements, std::vector<WriteContext> contexts, bool batch, ApplyFn apply,
                ResultDone done);
  // The same, waiting for the answer. REQUIRES: not on a thread the answer
  // could need (a replica answer's, the timers').
  Result<ResultSet> Run(std::vector<RawStatement> statements, std::vector<WriteContext> contexts, bool batch,
                        ApplyFn apply);

 private:
  struct Check;
  struct Pending;
  // The steps of RunAsync: a Paxos round (or, on one node, the partition's
  // lock), the current rows read, the check, the write; again from a new
  // round while a later ballot preempts the proposal.
  void Begin(std::shared_ptr<Pending> pending);
  void Attempt(std::shared_ptr<Pending> pending, RequestConsistency read, PaxosRound* round);
  void Decide(std::shared_ptr<Pending> pending, const std::vector<ResultSet>& current, PaxosRound* round);
  void Finish(std::shared_ptr<Pending> pending, Result<ResultSet> result);
  Result<Check> Prepare(const RawStatement& statement, const WriteContext& ctx);
  // Whether the check holds against `current` (its row as read: empty, no
  // row); when not (or always, for a batch), the current row's columns to
  // show (all of them for IF NOT EXISTS, else the conditions' columns).
  static Result<bool> Judge(const Check& check, const ResultSet& current, bool show_always, ResultSet* shown);
  // The batch's answer once the checks were judged.
  static ResultSet BatchResult(const Check& first, const std::vector<ResultSet>& failures);
  Coordinator* coordinator_;
  Database* db_;  // coordinator_->database()
  PartitionLocks locks_;  // one node: a conditional statement's partition
};

}  // namespace tessera::cql
