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
// The write takes this node's clock as its timestamp (the client's default
// timestamp is ignored, as Cassandra times it by the Paxos ballot).
// Linearizable among conditional statements: each runs its read, check and
// write under a lock striped by partition (one node: the seam Paxos will
// take across replicas). Ordinary writes do not take the lock, as in
// Cassandra, where they do not take part in Paxos either.
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

#include "cql/executor/modification_statements.h"
#include "cql/executor/result_set.h"

namespace tessera::cql {

class ConditionalWrites {
 public:
  explicit ConditionalWrites(Database* db) : db_(db) {}
  // INSERT ... IF NOT EXISTS, UPDATE / DELETE with IF EXISTS or IF conditions.
  static bool IsConditional(const RawStatement& statement);
  // REQUIRES: IsConditional(statement). `apply` writes the mutations (with
  // the guardrails) when the conditions hold.
  Result<ResultSet> Run(const RawStatement& statement, const WriteContext& ctx,
                        const std::function<Status(const std::vector<Mutation>&)>& apply);
  // A BATCH with conditions: every statement on one partition of one
  // table; applied all together when every condition holds. When not, one
  // row per checked row that exists (whether its own condition held or
  // not), under [applied] and the union of the columns shown. contexts[i]
  // binds statements[i].
  Result<ResultSet> RunBatch(const std::vector<RawStatement>& statements, const std::vector<WriteContext>& contexts,
                             const std::function<Status(const std::vector<Mutation>&)>& apply);

 private:
  struct Check;
  Result<Check> Prepare(const RawStatement& statement, const WriteContext& ctx);
  Result<bool> Evaluate(const Check& check, bool show_always, ResultSet* shown);
  std::mutex& StripeOf(const TableSchema& table, const std::vector<std::string>& partition_key);
  Database* db_;
  std::array<std::mutex, 64> stripes_;
};

}  // namespace tessera::cql
