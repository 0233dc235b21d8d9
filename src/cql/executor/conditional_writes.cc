#include "cql/executor/conditional_writes.h"

#include <algorithm>
#include <set>

#include "cql/executor/internal_query.h"
#include "keys/murmur3.h"
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

// The current row (SELECT * of the target) read at `consistency`, or nothing.
Result<ResultSet> ReadCurrent(Coordinator& coordinator, const TableSchema& t, const Target& target,
                              const RequestConsistency& consistency) {
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
  return ExecuteInternal(coordinator, cql + " LIMIT 1", values, consistency);
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

std::mutex& ConditionalWrites::StripeOf(const TableSchema& table, const std::vector<std::string>& partition_key) {
  std::string key = table.uuid;
  for (const auto& part : partition_key) key += part;
  return stripes_[static_cast<uint64_t>(CassandraMurmur3(key).h1) % stripes_.size()];
}

// Whether the check holds now; when not (or always, for a batch), the current
// row's columns to show (all of them for IF NOT EXISTS, else the
// conditions' columns).
Result<bool> ConditionalWrites::Evaluate(const Check& check, const RequestConsistency& read, bool show_always,
                                         ResultSet* shown) {
  TESSERA_ASSIGN_OR_RETURN(ResultSet current, ReadCurrent(*coordinator_, *check.table, check.target, read));
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

Result<ResultSet> ConditionalWrites::Serialized(const Check& check, const std::vector<std::string>& partition_key,
                                                ConsistencyLevel serial, const Attempt& attempt) {
  for (int preempted = 0;; ++preempted) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<PaxosRound> round,
                             coordinator_->BeginPaxos(check.table, partition_key, serial));
    if (!round) {
      std::lock_guard<std::mutex> lock(StripeOf(*check.table, partition_key));
      return attempt(check.consistency, nullptr);
    }
    // What a committed round wrote is on a quorum (or was repaired onto the
    // promisers by the prepare), so a quorum read sees it.
    const RequestConsistency read{serial == ConsistencyLevel::kLocalSerial ? ConsistencyLevel::kLocalQuorum
                                                                           : ConsistencyLevel::kQuorum,
                                  WriteType::kSimple};
    auto result = attempt(read, &*round);
    if (!round->preempted) return result;
    if (preempted + 1 >= kMaxPreemptions) {
      Status::ReplicaShortfall f;
      f.consistency = static_cast<uint16_t>(serial);
      f.write_type = "CAS";
      f.contentions = static_cast<uint16_t>(kMaxPreemptions);
      return Status::ConsistencyFailure(Status::Code::kWriteTimeout,
                                        "Operation timed out - the conditional update lost " +
                                            std::to_string(kMaxPreemptions) + " Paxos rounds to contention",
                                        f);
    }
  }
}

Status ConditionalWrites::ApplyChecked(std::vector<Mutation> mutations, const Check& check, PaxosRound* round,
                                       const ApplyFn& apply) {
  if (round) {
    for (auto& m : mutations) m.timestamp_micros = round->ballot_micros;
  }
  return apply(mutations, RequestConsistency{check.consistency.level, WriteType::kCas, round, check.consistency.trace});
}

Result<ResultSet> ConditionalWrites::Run(const RawStatement& s, const WriteContext& ctx, const ApplyFn& apply) {
  TESSERA_ASSIGN_OR_RETURN(Check check, Prepare(s, ctx));
  return Serialized(check, check.target.partition_key, ctx.serial, [&](const RequestConsistency& read, PaxosRound* round) -> Result<ResultSet> {
    ResultSet shown;
    TESSERA_ASSIGN_OR_RETURN(bool holds, Evaluate(check, read, /*show_always=*/false, &shown));
    if (holds) {
      Status applied = ApplyChecked(check.mutations, check, round, apply);
      if (round && round->preempted) return ResultSet();
      TESSERA_RETURN_IF_ERROR(applied);
    }
    ResultSet rs = AppliedResult(*check.table, holds);
    if (!shown.rows.empty()) {
      rs.columns.insert(rs.columns.end(), shown.columns.begin(), shown.columns.end());
      rs.rows[0].insert(rs.rows[0].end(), shown.rows[0].begin(), shown.rows[0].end());
    }
    return rs;
  });
}

Result<ResultSet> ConditionalWrites::RunBatch(const std::vector<RawStatement>& statements,
                                              const std::vector<WriteContext>& contexts,
                                              const ApplyFn& apply) {
  std::vector<Check> checks;
  for (size_t i = 0; i < statements.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(Check check, Prepare(statements[i], contexts[i]));
    checks.push_back(std::move(check));
  }
  const Check& first = checks.front();
  std::vector<Mutation> all;
  for (const auto& check : checks) {
    if (check.table->uuid != first.table->uuid) {
      return Status::InvalidArgument("Batch with conditions cannot span multiple tables");
    }
    for (const auto& m : check.mutations) {
      if (m.partition_key != first.mutations.front().partition_key) {
        return Status::InvalidArgument("Batch with conditions cannot span multiple partitions");
      }
      all.push_back(m);
    }
  }
  return Serialized(first, first.mutations.front().partition_key, contexts.front().serial,
                    [&](const RequestConsistency& read, PaxosRound* round) -> Result<ResultSet> {
                      return EvaluateBatch(checks, all, read, round, apply);
                    });
}

Result<ResultSet> ConditionalWrites::EvaluateBatch(const std::vector<Check>& checks, const std::vector<Mutation>& all,
                                                   const RequestConsistency& read, PaxosRound* round,
                                                   const ApplyFn& apply) {
  const Check& first = checks.front();
  bool holds = true;
  ResultSet rs = AppliedResult(*first.table, false);
  std::vector<ResultSet> failures;
  for (const auto& check : checks) {
    if (!check.conditional) continue;
    ResultSet shown;
    TESSERA_ASSIGN_OR_RETURN(bool ok, Evaluate(check, read, /*show_always=*/true, &shown));
    holds = holds && ok;
    if (!shown.rows.empty()) failures.push_back(std::move(shown));
  }
  if (holds) {
    Status applied = ApplyChecked(all, first, round, apply);
    if (round && round->preempted) return ResultSet();
    TESSERA_RETURN_IF_ERROR(applied);
    return AppliedResult(*first.table, true);
  }
  // Not applied: a row per checked row that exists, under the union of the
  // columns shown (each row's other columns null), in the table's order.
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
