// INSERT, UPDATE and DELETE -> Mutations (db/mutation.h), one per touched
// partition, with Cassandra's semantics:
//  - INSERT writes the row marker (the row exists with only its key);
//    UPDATE does not (the row lives while a cell does);
//  - null writes a tombstone; an unset bind value leaves the column alone;
//  - a non-frozen collection assigned a value first deletes the old one;
//    l = l + [..] appends (timeuuid element paths), s = s + {..} / m = m +
//    {k: v} / m[k] = v add, s = s - {..} / m = m - {k} remove elements;
//  - DELETE of columns, of m[k], of rows, of clustering ranges and of whole
//    partitions; USING TTL (seconds, 0 = none) and USING TIMESTAMP
//    (microseconds) apply to the whole statement.
//  - lists: l = l + [..] appends, l = [..] + l prepends, l[i] = v sets,
//    DELETE l[i] deletes and l = l - [..] removes by value; the last three
//    read the current list first, as in Cassandra.
// The IF NOT EXISTS / IF EXISTS / IF conditions of a statement are ignored
// here: conditional_writes.h checks them and then applies what these build.
// INSERT JSON is expanded by insert_json.h.
//
// Thread safety: pure functions over immutable schemas.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/term_binder.h"
#include "cql/parser/raw_statements.h"
#include "coordinator/coordinator.h"
#include "db/database.h"

namespace tessera::cql {

// Resolves a table name against the current keyspace.
// Errors: InvalidArgument "No keyspace has been specified..." / "unconfigured table t".
Result<std::shared_ptr<const TableSchema>> ResolveTable(const Database& db, const QualifiedName& name,
                                                        const std::string& current_keyspace);

struct WriteContext {
  BindContext bind;
  std::string keyspace;                      // the connection's current keyspace
  std::optional<int64_t> default_timestamp;  // the request's client timestamp (protocol flag 0x20)
  // The request's consistency level: the reads a list operation makes
  // before it writes (l[i] = v, DELETE l[i], l = l - [..]) use it.
  RequestConsistency consistency;
  // A conditional statement's serial consistency (SERIAL or LOCAL_SERIAL;
  // protocol flag 0x10): the level of its Paxos rounds (conditional_writes.h).
  ConsistencyLevel serial = ConsistencyLevel::kSerial;
  // When set, a statement that read the current list before it wrote sets
  // it to true (the read waits on the calling thread: QueryProcessor then
  // runs the statement on a waiting-request thread).
  bool* read_before_write = nullptr;
};

// Counter tables (TableSchema::HasCounters; Cassandra's rules and messages):
// INSERT is refused, UPDATE increments (`c = c + n`, `c = c - n`, `c += n`) and cannot set,
// no statement takes USING TIMESTAMP or TTL; DELETE removes counters for good.
Result<std::vector<Mutation>> BuildInsert(const Database& db, const InsertStatement& stmt, const WriteContext& ctx);
Result<std::vector<Mutation>> BuildUpdate(Coordinator& coordinator, const UpdateStatement& stmt, const WriteContext& ctx);
Result<std::vector<Mutation>> BuildDelete(Coordinator& coordinator, const DeleteStatement& stmt, const WriteContext& ctx);

// Cassandra's rules for counters in a batch (BatchStatement.validate), over the batch's
// mutations. Errors: InvalidArgument "Cannot include non-counter statement in a counter batch",
// "Cannot include a counter statement in a logged batch", "Counter and non-counter mutations
// cannot exist in the same batch".
Status CheckBatchCounters(BatchStatement::Type type, const std::vector<Mutation>& mutations);

}  // namespace tessera::cql
