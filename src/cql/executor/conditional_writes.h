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
//    Coordinator::BeginPaxos, cluster/paxos_coordinator.h): prepare at the
//    statement's serial consistency (SERIAL or LOCAL_SERIAL), read the
//    current row at QUORUM (LOCAL_QUORUM), check, then propose and commit
//    the write, timed by the ballot, at the statement's consistency level.
//    A proposal every replica refused (a later round won) runs the whole
//    statement again, up to kMaxPreemptions times;
//  - on one node, under a lock striped by partition; the write takes this
//    node's clock as its timestamp.
// Either way the client's default timestamp is ignored, as Cassandra times
// the write by the ballot.
//
// Errors: InvalidArgument in Cassandra's words (IN on the partition key,
// counters, conditions on key columns, ...), and those of building the
// write and of `apply`.
//
// Thread safety: thread-safe.
#pragma once

#include <array>
#include <functional>
#include <mutex>

#include "coordinator/coordinator.h"
#include "cql/executor/modification_statements.h"
#include "cql/executor/result_set.h"

namespace tessera::cql {

class ConditionalWrites {
 public:
  // REQUIRES: coordinator outlives this.
  explicit ConditionalWrites(Coordinator* coordinator) : coordinator_(coordinator), db_(&coordinator->database()) {}
  // INSERT ... IF NOT EXISTS, UPDATE / DELETE with IF EXISTS or IF conditions.
  static bool IsConditional(const RawStatement& statement);
  // Writes the mutations (with the guardrails) at the given consistency:
  // the request's level, write type CAS, and the Paxos round on a cluster.
  using ApplyFn = std::function<Status(const std::vector<Mutation>&, const RequestConsistency&)>;
  static constexpr int kMaxPreemptions = 20;
  // REQUIRES: IsConditional(statement). `apply` runs when the conditions hold.
  Result<ResultSet> Run(const RawStatement& statement, const WriteContext& ctx, const ApplyFn& apply);
  // A BATCH with conditions: every statement on one partition of one
  // table; applied all together when every condition holds. When not, one
  // row per checked row that exists (whether its own condition held or
  // not), under [applied] and the union of the columns shown. contexts[i]
  // binds statements[i].
  Result<ResultSet> RunBatch(const std::vector<RawStatement>& statements, const std::vector<WriteContext>& contexts,
                             const ApplyFn& apply);

 private:
  struct Check;
  // One try of a statement: the current rows read at `read`, the write
  // through `round` (null on one node).
  using Attempt = std::function<Result<ResultSet>(const RequestConsistency& read, PaxosRound* round)>;
  // Runs `attempt` serialized with every other conditional statement on
  // `partition_key`: under a Paxos round, again while preempted,
  // or under the partition's lock.
  // `check` gives the table and the request's consistency.
  Result<ResultSet> Serialized(const Check& check, const std::vector<std::string>& partition_key,
                               ConsistencyLevel serial, const Attempt& attempt);
  // Applies `mutations` of `check` (timed by the round's ballot) through `round`.
  static Status ApplyChecked(std::vector<Mutation> mutations, const Check& check, PaxosRound* round,
                             const ApplyFn& apply);
  Result<ResultSet> EvaluateBatch(const std::vector<Check>& checks, const std::vector<Mutation>& all,
                                  const RequestConsistency& read, PaxosRound* round, const ApplyFn& apply);
  Result<Check> Prepare(const RawStatement& statement, const WriteContext& ctx);
  Result<bool> Evaluate(const Check& check, const RequestConsistency& read, bool show_always, ResultSet* shown);
  std::mutex& StripeOf(const TableSchema& table, const std::vector<std::string>& partition_key);
  Coordinator* coordinator_;
  Database* db_;  // coordinator_->database()
  std::array<std::mutex, 64> stripes_;
};

}  // namespace tessera::cql
