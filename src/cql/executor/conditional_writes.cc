#include "cql/executor/conditional_writes.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <set>

#include "common/blocking_wait.h"
#include "cql/executor/internal_query.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera::cql {
namespace {

// The row the statement writes: its partition key and, unless it touches
// only the static row or the whole partition, its clustering key.
struct Target {
  std::vector<std::string> partition_key;
  std::vector<std::string> clustering;
  bool row = false;
};

Result<Target> TargetOf(const std::vector<Mutation>& mutations, bool deletion) {
  const char* what = deletion ? "deletions" : "updates";
  if (mutations.size() != 1) return Status::InvalidArgument(std::string("IN on the partition key is not supported with conditional ") + what);
  Target target;
  target.partition_key = mutations[0].partition_key;
  if (!mutations[0].range_deletions.empty()) {
    return Status::InvalidArgument("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions");
  }
  for (const auto& r : mutations[0].rows) {
    if (r.is_static) continue;
    if (target.row && r.clustering != target.clustering) {
      return Status::InvalidArgument(std::string("IN on the clustering key columns is not supported with conditional ") + what);
    }
    target.row = true;
    target.clustering = r.clustering;
  }
  return target;
}

// The current row (SELECT * of the target) read at `consistency`, or
// nothing: on a cluster (`replicated`) without holding a thread.
void ReadCurrentAsync(Coordinator& coordinator, const TableSchema& t, const Target& target,
                      const RequestConsistency& consistency, bool replicated,
                      std::function<void(Result<ResultSet>)> done) {
  std::string cql = "SELECT * FROM " + QuoteIdentifier(t.keyspace) + "." + QuoteIdentifier(t.name) + " WHERE ";
  std::vector<WireValue> values;
  size_t i = 0;
  for (const auto* c : t.PartitionKey()) {
    cql += (i ? " AND " : "") + QuoteIdentifier(c->name) + " = ?";
    values.push_back(WireValue::Of(target.partition_key[i++]));
  }
  size_t k = 0;
  for (const auto* c : t.Clustering()) {
    if (k >= target.clustering.size()) break;
    cql += " AND " + QuoteIdentifier(c->name) + " = ?";
    values.push_back(WireValue::Of(target.clustering[k++]));
  }
  cql += " LIMIT 1";
  if (!replicated) return done(ExecuteInternal(coordinator, cql, values, consistency));
  SelectInternalAsync(coordinator, cql, std::move(values), consistency, std::move(done));
}

CqlType Comparable(const CqlType& type) {
  switch (type.kind()) {
    case TypeKind::kList: return CqlType::List(type.params()[0], true);
    case TypeKind::kSet: return CqlType::Set(type.params()[0], true);
    case TypeKind::kMap: return CqlType::Map(type.params()[0], type.params()[1], true);
    default: return type;
  }
}

// "<", "<=", ">" or ">=" for a slice operator.
std::string OperatorText(Relation::Op op) {
  return op == Relation::Op::kLt ? "<" : op == Relation::Op::kLe ? "<=" : op == Relation::Op::kGt ? ">" : ">=";
}

// -1/0/1, or nullopt when either side is null.
std::optional<int> Compare(const CqlType& type, const std::optional<std::string>& a, const std::optional<std::string>& b) {
  if (!a || !b) return std::nullopt;
  const CqlType comparable = Comparable(type);
  auto va = Deserialize(comparable, *a);
  auto vb = Deserialize(comparable, *b);
  if (!va.ok() || !vb.ok()) return *a == *b ? 0 : (*a < *b ? -1 : 1);
  const int c = CompareValues(comparable, *va, *vb);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

// The element m[key] / l[index] of a collection cell, serialized.
std::optional<std::string> ElementOf(const CqlType& type, const std::optional<std::string>& cell, const std::string& key) {
  if (!cell) return std::nullopt;
  auto v = Deserialize(type, *cell);
  if (!v.ok()) return std::nullopt;
  std::string out;
  if (type.kind() == TypeKind::kMap) {
    auto k = Deserialize(type.params()[0], key);
    if (!k.ok()) return std::nullopt;
    for (const auto& [ek, ev] : v->as_entries()) {
      if (CompareValues(type.params()[0], ek, *k) == 0 && Serialize(type.params()[1], ev, &out).ok()) return out;
    }
    return std::nullopt;
  }
  if (type.kind() == TypeKind::kList && key.size() == 4) {
    const int64_t index = static_cast<int32_t>(static_cast<uint32_t>(static_cast<unsigned char>(key[0])) << 24 |
                                               static_cast<uint32_t>(static_cast<unsigned char>(key[1])) << 16 |
                                               static_cast<uint32_t>(static_cast<unsigned char>(key[2])) << 8 |
                                               static_cast<uint32_t>(static_cast<unsigned char>(key[3])));
    const auto& items = v->as_elements();
    if (index >= 0 && index < static_cast<int64_t>(items.size()) && Serialize(type.params()[0], items[static_cast<size_t>(index)], &out).ok()) {
      return out;
    }
  }
  return std::nullopt;
}

bool Holds(Relation::Op op, const CqlType& type, const std::optional<std::string>& current,
           const std::vector<std::optional<std::string>>& operands) {
  switch (op) {
    case Relation::Op::kIn:
      return std::any_of(operands.begin(), operands.end(), [&](const auto& o) {
        return (!o && !current) || Compare(type, current, o) == std::optional<int>(0);
      });
    case Relation::Op::kEq:
      return operands[0] ? Compare(type, current, operands[0]) == std::optional<int>(0) : !current;
    case Relation::Op::kNe:
      return operands[0] ? Compare(type, current, operands[0]) != std::optional<int>(0) : current.has_value();
    default: break;
  }
  auto c = Compare(type, current, operands[0]);
  if (!c) return false;
  switch (op) {
    case Relation::Op::kLt: return *c < 0;
    case Relation::Op::kLe: return *c <= 0;
    case Relation::Op::kGt: return *c > 0;
    case Relation::Op::kGe: return *c >= 0;
    default: return false;
  }
}

// Evaluates every condition against the current row (empty: no row).
// `named` collects the columns the conditions name.
Result<bool> ConditionsHold(const TableSchema& t, const std::vector<Relation>& conditions, const ResultSet& current,
                            const BindContext& bind, std::set<size_t>* named) {
  bool holds = true;
  for (const auto& r : conditions) {
    const ColumnDef* c = r.columns.empty() ? nullptr : t.FindColumn(r.columns[0]);
    if (c == nullptr) return Status::InvalidArgument("Undefined column name " + (r.columns.empty() ? std::string() : r.columns[0]));
    if (c->kind == ColumnKind::kPartitionKey || c->kind == ColumnKind::kClustering) {
      return Status::InvalidArgument("PRIMARY KEY column '" + c->name + "' cannot have IF conditions");
    }
    if (r.op != Relation::Op::kEq && r.op != Relation::Op::kNe && r.op != Relation::Op::kLt && r.op != Relation::Op::kLe &&
        r.op != Relation::Op::kGt && r.op != Relation::Op::kGe && r.op != Relation::Op::kIn) {
      return Status::InvalidArgument("Unsupported operator in IF condition on " + c->name);
    }
    named->insert(static_cast<size_t>(c - t.columns.data()));
    CqlType type = c->type;
    std::optional<std::string> value;
    if (!current.rows.empty()) {
      for (size_t i = 0; i < current.columns.size(); ++i) {
        if (current.columns[i].name == c->name) value = current.rows[0][i];
      }
    }
    if (r.lhs == Relation::Lhs::kMapElement) {
      if (type.kind() != TypeKind::kMap && type.kind() != TypeKind::kList) {
        return Status::InvalidArgument("Invalid element access syntax for non-collection column " + c->name);
      }
      const CqlType key_type = type.kind() == TypeKind::kMap ? type.params()[0] : CqlType::Scalar(TypeKind::kInt);
      TESSERA_ASSIGN_OR_RETURN(BoundValue key, BindTerm(*r.map_key, key_type, "key(" + c->name + ")", bind));
      if (key.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value for " + c->name + " element access");
      value = ElementOf(type, value, key.bytes);
      type = type.kind() == TypeKind::kMap ? type.params()[1] : type.params()[0];
    }
    if (r.lhs == Relation::Lhs::kField) {  // IF udt.field op value
      if (type.kind() != TypeKind::kUdt) {
        return Status::InvalidArgument("Invalid field selection: " + c->name + " of type " + type.ToCql() +
                                       " is not a user type");
      }
      std::optional<size_t> field = UserTypeFieldIndex(type, r.field);
      if (!field) return Status::InvalidArgument(c->name + " of type " + type.ToCql() + " has no field " + r.field);
      if (value) value = SerializedComponent(*value, *field);
      type = type.params()[*field];
    }
    const bool slice = r.op == Relation::Op::kLt || r.op == Relation::Op::kLe || r.op == Relation::Op::kGt ||
                       r.op == Relation::Op::kGe;
    if (slice && ReferencesDuration(type)) {  // as Cassandra's ColumnCondition: durations have no order
      return Status::InvalidArgument("Slice conditions ( " + OperatorText(r.op) + " ) are not supported on durations");
    }
    std::vector<std::optional<std::string>> operands;
    auto bind_operand = [&](const Term& term, const CqlType& as) -> Status {
      TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(term, as, c->name, bind));
      if (b.kind == BoundValue::Kind::kUnset) return Status::InvalidArgument("Invalid 'unset' value in condition");
      operands.push_back(b.kind == BoundValue::Kind::kValue ? std::optional<std::string>(b.bytes) : std::nullopt);
      return Status::OK();
    };
    if (r.op == Relation::Op::kIn && r.in_marker) {
      TESSERA_ASSIGN_OR_RETURN(BoundValue list, BindTerm(r.value, CqlType::List(type, true), c->name, bind));
      if (list.kind == BoundValue::Kind::kValue) {
        auto v = Deserialize(CqlType::List(type, true), list.bytes);
        if (v.ok()) {
          for (const auto& e : v->as_elements()) {
            std::string bytes;
            operands.push_back(!e.is_null() && Serialize(type, e, &bytes).ok() ? std::optional<std::string>(bytes) : std::nullopt);
          }
        }
      }
    } else if (r.op == Relation::Op::kIn) {
      for (const auto& term : r.in_values) TESSERA_RETURN_IF_ERROR(bind_operand(term, type));
    } else {
      TESSERA_RETURN_IF_ERROR(bind_operand(r.value, type));
      if (slice && !operands[0]) {
        return Status::InvalidArgument("Invalid comparison with null for operator \"" + OperatorText(r.op) + "\"");
      }
    }
    holds = holds && Holds(r.op, type, value, operands);
  }
  return holds;
}

ResultSet AppliedResult(const TableSchema& t, bool applied) {
  ResultSet rs;
  rs.columns.push_back(ColumnSpec{t.keyspace, t.name, "[applied]", CqlType::Scalar(TypeKind::kBoolean)});
  rs.rows.push_back({std::string(1, applied ? '\x01' : '\x00')});
  return rs;
}

}  // namespace

bool ConditionalWrites::IsConditional(const RawStatement& s) {
  if (const auto* i = std::get_if<InsertStatement>(&s)) return i->if_not_exists;
  if (const auto* u = std::get_if<UpdateStatement>(&s)) return u->if_exists || !u->conditions.empty();
  if (const auto* d = std::get_if<DeleteStatement>(&s)) return d->if_exists || !d->conditions.empty();
  return false;
}

// One statement of a conditional write: what it writes and what it checks.
struct ConditionalWrites::Check {
  std::shared_ptr<const TableSchema> table;
  std::vector<Mutation> mutations;
  Target target;
  bool conditional = false;
  bool if_exists = false, if_not_exists = false;
  std::vector<Relation> conditions;
  const BindContext* bind = nullptr;
  RequestConsistency consistency;  // the request's: the level the write goes out at
};

Result<ConditionalWrites::Check> ConditionalWrites::Prepare(const RawStatement& s, const WriteContext& request) {
  // The write is timed by this node's clock, not by the client's default
  // timestamp (Cassandra times it by the Paxos ballot), so that a write
  // that was checked is not hidden by an older client clock.
  WriteContext ctx = request;
  ctx.default_timestamp.reset();
  Check check;
  check.conditional = IsConditional(s);
  check.bind = &request.bind;
  check.consistency = request.consistency;
  bool deletion = false;
  Result<std::vector<Mutation>> built = std::vector<Mutation>{};
  QualifiedName name;
  // UPDATE and DELETE: the conditions, and the write built without them.
  bool timestamp = false;
  auto unconditional = [&](auto plain, auto build) {
    timestamp = plain.using_clause.timestamp.has_value();
    check.if_exists = plain.if_exists;
    check.conditions = plain.conditions;
    name = plain.table;
    plain.if_exists = false;
    plain.conditions.clear();
    built = build(*coordinator_, plain, ctx);
  };
  if (const auto* i = std::get_if<InsertStatement>(&s)) {
    InsertStatement plain = *i;
    plain.if_not_exists = false;
    check.if_not_exists = i->if_not_exists;
    timestamp = i->using_clause.timestamp.has_value();
    name = i->table;
    built = BuildInsert(*db_, plain, ctx);
  } else if (const auto* u = std::get_if<UpdateStatement>(&s)) {
    unconditional(*u, BuildUpdate);
  } else if (const auto* d = std::get_if<DeleteStatement>(&s)) {
    deletion = true;
    unconditional(*d, BuildDelete);
  }
  if (check.conditional && timestamp) return Status::InvalidArgument("Cannot provide custom timestamp for conditional updates");
  TESSERA_ASSIGN_OR_RETURN(check.table, ResolveTable(*db_, name, ctx.keyspace));
  if (check.table->HasCounters()) return Status::InvalidArgument("Conditional updates are not supported on counter tables");
  if (!built.ok()) return built.status();
  check.mutations = std::move(*built);
  if (!check.conditional) return check;
  TESSERA_ASSIGN_OR_RETURN(check.target, TargetOf(check.mutations, deletion));
  if (!check.target.row && !check.table->Clustering().empty()) {
    for (const auto& r : check.conditions) {
      const ColumnDef* c = r.columns.empty() ? nullptr : check.table->FindColumn(r.columns[0]);
      if (c && c->kind == ColumnKind::kRegular) {
        return Status::InvalidArgument("Some clustering keys are missing: " + check.table->Clustering()[0]->name);
      }
    }
  }
  return check;
}

// Whether the check holds now; when not (or always, for a batch), the current
// row's columns to show (all of them for IF NOT EXISTS, else the
// conditions' columns).
Result<bool> ConditionalWrites::Judge(const Check& check, const ResultSet& current, bool show_always,
                                      ResultSet* shown) {
  const bool exists = !current.rows.empty();
  std::set<size_t> named;
  bool holds = false;
  if (check.if_not_exists) {
    holds = !exists;
  } else if (check.if_exists) {
    holds = exists;
  } else {
    TESSERA_ASSIGN_OR_RETURN(holds, ConditionsHold(*check.table, check.conditions, current, *check.bind, &named));
  }
  shown->rows.clear();
  if ((holds && !show_always) || !exists) return holds;
  shown->rows.emplace_back();
  for (size_t i = 0; i < current.columns.size(); ++i) {
    const ColumnDef* c = check.table->FindColumn(current.columns[i].name);
    const bool show = check.if_not_exists || (c != nullptr && named.count(static_cast<size_t>(c - check.table->columns.data())));
    if (!show) continue;
    shown->columns.push_back(current.columns[i]);
    shown->rows[0].push_back(current.rows[0][i]);
  }
  return holds;
}

// One RunAsync: its statements' writes and checks, with the values they
// bind (owned: the request's bytes go once RunAsync returns), and the round.
struct ConditionalWrites::Pending {
  std::vector<std::vector<WireValue>> values;  // contexts[i].bind.values -> values[i]
  std::vector<WriteContext> contexts;          // checks[i].bind -> contexts[i].bind
  std::vector<Check> checks;
  std::vector<std::string> partition_key;
  std::vector<Mutation> all;  // a batch's: every statement's writes
  bool batch = false;
  ConsistencyLevel serial = ConsistencyLevel::kSerial;
  ApplyFn apply;
  ResultDone done;
  int preemptions = 0;
  std::optional<PaxosRound> round;  // on a cluster: the current one
  PartitionLocks::Held held;        // on one node: the partition's lock
};

void ConditionalWrites::RunAsync(std::vector<RawStatement> statements, std::vector<WriteContext> contexts, bool batch,
                                 ApplyFn apply, ResultDone done) {
  auto p = std::make_shared<Pending>();
  p->batch = batch;
  p->apply = std::move(apply);
  p->done = std::move(done);
  for (const auto& c : contexts) p->values.push_back(c.bind.values ? *c.bind.values : std::vector<WireValue>());
  p->contexts = std::move(contexts);
  for (size_t i = 0; i < p->contexts.size(); ++i) p->contexts[i].bind.values = &p->values[i];
  for (size_t i = 0; i < statements.size(); ++i) {
    Result<Check> check = Prepare(statements[i], p->contexts[i]);
    if (!check.ok()) return p->done(check.status());
    p->checks.push_back(std::move(*check));
    p->contexts[i].read_before_write = nullptr;  // the caller's; only building the writes reads before
  }
  const Check& first = p->checks.front();
  p->serial = p->contexts.front().serial;
  if (!batch) {
    p->partition_key = first.target.partition_key;
  } else {
    for (const auto& check : p->checks) {
      if (check.table->uuid != first.table->uuid) {
        return p->done(Status::InvalidArgument("Batch with conditions cannot span multiple tables"));
      }
      for (const auto& m : check.mutations) {
        if (m.partition_key != first.mutations.front().partition_key) {
          return p->done(Status::InvalidArgument("Batch with conditions cannot span multiple partitions"));
        }
        p->all.push_back(m);
      }
    }
    p->partition_key = first.mutations.front().partition_key;
  }
  Begin(std::move(p));
}

Result<ResultSet> ConditionalWrites::Run(std::vector<RawStatement> statements, std::vector<WriteContext> contexts,
                                         bool batch, ApplyFn apply) {
  return WaitFor<Result<ResultSet>>([&](ResultDone done) {
    RunAsync(std::move(statements), std::move(contexts), batch, std::move(apply), std::move(done));
  });
}

void ConditionalWrites::Begin(std::shared_ptr<Pending> p) {
  const std::shared_ptr<const TableSchema> table = p->checks.front().table;
  coordinator_->BeginPaxosAsync(
      table, p->partition_key, p->serial, /*for_read=*/false,
      [this, p, table](Result<std::optional<PaxosRound>> round) {
        if (!round.ok()) return Finish(p, round.status());
        if (!*round) {  // one node: the partition's lock, granted without a thread
          locks_.Acquire({PartitionLocks::KeyOf(table->id, p->partition_key)}, [this, p](PartitionLocks::Held held) {
            p->held = std::move(held);
            Attempt(p, p->checks.front().consistency, nullptr);
          });
          return;
        }
        p->round = std::move(**round);
        // What a committed round wrote is on a quorum (or was repaired onto
        // the promisers by the prepare), so a quorum read sees it.
        const RequestConsistency read{p->serial == ConsistencyLevel::kLocalSerial ? ConsistencyLevel::kLocalQuorum
                                                                                  : ConsistencyLevel::kQuorum,
                                      WriteType::kSimple};
        Attempt(p, read, &*p->round);
      });
}

void ConditionalWrites::Attempt(std::shared_ptr<Pending> p, RequestConsistency read, PaxosRound* round) {
  // Every checked row read at once; the last answer decides.
  struct Reads {
    std::mutex mu;
    std::vector<ResultSet> current;
    size_t remaining = 0;
    Status first;
  };
  auto reads = std::make_shared<Reads>();
  reads->current.resize(p->checks.size());
  std::vector<size_t> checked;
  for (size_t i = 0; i < p->checks.size(); ++i) {
    if (p->checks[i].conditional) checked.push_back(i);
  }
  reads->remaining = checked.size();
  if (checked.empty()) return Decide(p, reads->current, round);
  for (size_t i : checked) {
    const Check& check = p->checks[i];
    ReadCurrentAsync(*coordinator_, *check.table, check.target, read, round != nullptr,
                     [this, p, reads, i, round](Result<ResultSet> rs) {
                       std::unique_lock<std::mutex> lock(reads->mu);
                       if (rs.ok()) {
                         reads->current[i] = std::move(*rs);
                       } else if (reads->first.ok()) {
                         reads->first = rs.status();
                       }
                       if (--reads->remaining > 0) return;
                       lock.unlock();
                       if (!reads->first.ok()) return Finish(p, reads->first);
                       Decide(p, reads->current, round);
                     });
  }
}

void ConditionalWrites::Decide(std::shared_ptr<Pending> p, const std::vector<ResultSet>& current, PaxosRound* round) {
  const Check& first = p->checks.front();
  ResultSet answer;
  std::vector<Mutation> mutations;
  // The conditions bind with this thread's generator (uuid()), not the request thread's.
  for (auto& c : p->contexts) c.bind.rng = &ThreadRandom();
  try {
    if (!p->batch) {
      ResultSet shown;
      Result<bool> holds = Judge(first, current[0], /*show_always=*/false, &shown);
      if (!holds.ok()) return Finish(p, holds.status());
      answer = AppliedResult(*first.table, *holds);
      if (!shown.rows.empty()) {
        answer.columns.insert(answer.columns.end(), shown.columns.begin(), shown.columns.end());
        answer.rows[0].insert(answer.rows[0].end(), shown.rows[0].begin(), shown.rows[0].end());
      }
      if (!*holds) return Finish(p, std::move(answer));
      mutations = first.mutations;
    } else {
      bool holds = true;
      std::vector<ResultSet> failures;
      for (size_t i = 0; i < p->checks.size(); ++i) {
        if (!p->checks[i].conditional) continue;
        ResultSet shown;
        Result<bool> ok = Judge(p->checks[i], current[i], /*show_always=*/true, &shown);
        if (!ok.ok()) return Finish(p, ok.status());
        holds = holds && *ok;
        if (!shown.rows.empty()) failures.push_back(std::move(shown));
      }
      if (!holds) return Finish(p, BatchResult(first, failures));
      answer = AppliedResult(*first.table, true);
      mutations = p->all;
    }
  } catch (const std::exception& e) {  // on a replica answer's thread: answer it, never end the process
    return Finish(p, Status::IOError(std::string("internal error: ") + e.what()));
  }
  // Timed by the round's ballot.
  if (round) {
    for (auto& m : mutations) m.timestamp_micros = round->ballot_micros;
  }
  const RequestConsistency through{first.consistency.level, WriteType::kCas, round, first.consistency.trace};
  p->apply(std::move(mutations), through, [this, p, round, answer = std::move(answer)](Status s) mutable {
    if (!round || !round->preempted) {
      if (!s.ok()) return Finish(p, std::move(s));
      return Finish(p, std::move(answer));
    }
    // A later ballot won: the whole statement again, from a new round.
    if (++p->preemptions >= kMaxPreemptions) {
      Status::ReplicaShortfall f;
      f.consistency = static_cast<uint16_t>(p->serial);
      f.write_type = "CAS";
      f.contentions = static_cast<uint16_t>(kMaxPreemptions);
      return Finish(p, Status::ConsistencyFailure(Status::Code::kWriteTimeout,
                                                  "Operation timed out - the conditional update lost " +
                                                      std::to_string(kMaxPreemptions) + " Paxos rounds to contention",
                                                  f));
    }
    Begin(p);
  });
}

void ConditionalWrites::Finish(std::shared_ptr<Pending> p, Result<ResultSet> result) {
  // Answered first, then the partition's lock released (it may run the
  // statements waiting for it on this thread).
  PartitionLocks::Held held = std::move(p->held);
  p->done(std::move(result));
}

// Not applied: a row per checked row that exists, under the union of the
// columns shown (each row's other columns null), in the table's order.
ResultSet ConditionalWrites::BatchResult(const Check& first, const std::vector<ResultSet>& failures) {
  ResultSet rs = AppliedResult(*first.table, false);
  std::vector<ColumnSpec> columns;
  for (const auto& c : first.table->columns) {
    for (const auto& f : failures) {
      const bool has = std::any_of(f.columns.begin(), f.columns.end(), [&](const ColumnSpec& s) { return s.name == c.name; });
      const bool listed = std::any_of(columns.begin(), columns.end(), [&](const ColumnSpec& s) { return s.name == c.name; });
      if (has && !listed) columns.push_back(ColumnSpec{first.table->keyspace, first.table->name, c.name, c.type});
    }
  }
  rs.columns.insert(rs.columns.end(), columns.begin(), columns.end());
  rs.rows.clear();
  for (const auto& f : failures) {
    std::vector<std::optional<std::string>> row{std::string(1, '\x00')};
    for (const auto& c : columns) {
      std::optional<std::string> cell;
      for (size_t i = 0; i < f.columns.size(); ++i) {
        if (f.columns[i].name == c.name) cell = f.rows[0][i];
      }
      row.push_back(cell);
    }
    rs.rows.push_back(std::move(row));
  }
  if (rs.rows.empty()) rs.rows.push_back({std::string(1, '\x00')});
  return rs;
}

}  // namespace tessera::cql
