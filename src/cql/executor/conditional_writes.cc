#include "cql/executor/conditional_writes.h"

#include <algorithm>
#include <set>

#include "cql/executor/internal_query.h"
#include "keys/murmur3.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera::cql {
namespace {

std::string Quoted(const std::string& name) {
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The row the statement writes: its partition key and, unless it touches
// only the static row or the whole partition, its clustering key.
struct Target {
  const Mutation* mutation = nullptr;
  std::vector<std::string> clustering;
  bool row = false;
};

Result<Target> TargetOf(const TableSchema& t, const std::vector<Mutation>& mutations, bool deletion) {
  const char* what = deletion ? "deletions" : "updates";
  if (mutations.size() != 1) return Status::InvalidArgument(std::string("IN on the partition key is not supported with conditional ") + what);
  Target target;
  target.mutation = &mutations[0];
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
  (void)t;
  return target;
}

// The current row (SELECT * of the target), or nothing.
Result<ResultSet> ReadCurrent(Database& db, const TableSchema& t, const Target& target) {
  std::string cql = "SELECT * FROM " + Quoted(t.keyspace) + "." + Quoted(t.name) + " WHERE ";
  std::vector<WireValue> values;
  size_t i = 0;
  for (const auto* c : t.PartitionKey()) {
    cql += (i ? " AND " : "") + Quoted(c->name) + " = ?";
    values.push_back(WireValue::Of(target.mutation->partition_key[i++]));
  }
  size_t k = 0;
  for (const auto* c : t.Clustering()) {
    if (k >= target.clustering.size()) break;
    cql += " AND " + Quoted(c->name) + " = ?";
    values.push_back(WireValue::Of(target.clustering[k++]));
  }
  return ExecuteInternal(db, cql + " LIMIT 1", values);
}

CqlType Comparable(const CqlType& type) {
  switch (type.kind()) {
    case TypeKind::kList: return CqlType::List(type.params()[0], true);
    case TypeKind::kSet: return CqlType::Set(type.params()[0], true);
    case TypeKind::kMap: return CqlType::Map(type.params()[0], type.params()[1], true);
    default: return type;
  }
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
      const bool ordering = r.op != Relation::Op::kEq && r.op != Relation::Op::kNe;
      if (ordering && !operands[0]) {
        return Status::InvalidArgument("Invalid comparison with null for operator \"" +
                                       std::string(r.op == Relation::Op::kLt ? "<" : r.op == Relation::Op::kLe ? "<="
                                                   : r.op == Relation::Op::kGt ? ">" : ">=") + "\"");
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

Result<ResultSet> ConditionalWrites::Run(const RawStatement& s, const WriteContext& ctx,
                                         const std::function<Status(const std::vector<Mutation>&)>& apply) {
  bool if_exists = false, if_not_exists = false, deletion = false;
  std::vector<Relation> conditions;
  Result<std::vector<Mutation>> built = std::vector<Mutation>{};
  QualifiedName name;
  // UPDATE and DELETE: the conditions, and the write built without them.
  auto unconditional = [&](auto plain, auto build) {
    if_exists = plain.if_exists;
    conditions = plain.conditions;
    name = plain.table;
    plain.if_exists = false;
    plain.conditions.clear();
    built = build(*db_, plain, ctx);
  };
  if (const auto* i = std::get_if<InsertStatement>(&s)) {
    InsertStatement plain = *i;
    plain.if_not_exists = false;
    if_not_exists = true;
    name = i->table;
    built = BuildInsert(*db_, plain, ctx);
  } else if (const auto* u = std::get_if<UpdateStatement>(&s)) {
    unconditional(*u, BuildUpdate);
  } else if (const auto* d = std::get_if<DeleteStatement>(&s)) {
    deletion = true;
    unconditional(*d, BuildDelete);
  }
  TESSERA_ASSIGN_OR_RETURN(auto table, ResolveTable(*db_, name, ctx.keyspace));
  if (table->HasCounters()) return Status::InvalidArgument("Conditional updates are not supported on counter tables");
  if (!built.ok()) return built.status();
  TESSERA_ASSIGN_OR_RETURN(Target target, TargetOf(*table, *built, deletion));
  if (!target.row && !table->Clustering().empty() && !conditions.empty()) {
    for (const auto& r : conditions) {
      const ColumnDef* c = r.columns.empty() ? nullptr : table->FindColumn(r.columns[0]);
      if (c && c->kind == ColumnKind::kRegular) {
        return Status::InvalidArgument("Some clustering keys are missing: " + table->Clustering()[0]->name);
      }
    }
  }
  std::string stripe_key = table->uuid;
  for (const auto& part : target.mutation->partition_key) stripe_key += part;
  std::lock_guard<std::mutex> lock(stripes_[static_cast<uint64_t>(CassandraMurmur3(stripe_key).h1) % stripes_.size()]);
  TESSERA_ASSIGN_OR_RETURN(ResultSet current, ReadCurrent(*db_, *table, target));
  const bool exists = !current.rows.empty();
  std::set<size_t> named;
  bool applied = false;
  if (if_not_exists) {
    applied = !exists;
  } else if (if_exists) {
    applied = exists;
  } else {
    TESSERA_ASSIGN_OR_RETURN(applied, ConditionsHold(*table, conditions, current, ctx.bind, &named));
  }
  if (applied) {
    TESSERA_RETURN_IF_ERROR(apply(*built));
    return AppliedResult(*table, true);
  }
  ResultSet rs = AppliedResult(*table, false);
  if (!exists) return rs;
  for (size_t i = 0; i < current.columns.size(); ++i) {
    const ColumnDef* c = table->FindColumn(current.columns[i].name);
    const bool shown = if_not_exists || (c != nullptr && named.count(static_cast<size_t>(c - table->columns.data())));
    if (!shown) continue;
    rs.columns.push_back(current.columns[i]);
    rs.rows[0].push_back(current.rows[0][i]);
  }
  return rs;
}

}  // namespace tessera::cql
