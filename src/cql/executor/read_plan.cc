#include "cql/executor/read_plan.h"

#include <algorithm>
#include <map>

#include "common/bytes.h"
#include "cql/executor/where_clause.h"
#include "keys/storage_key.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera::cql {
namespace {

// The partition token (keys/token.h), not the lexer's Token.
using PartitionToken = ::tessera::Token;

constexpr const char* kNeedsFiltering =
    "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. "
    "If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";

size_t IndexOf(const TableSchema& t, const ColumnDef* c) { return static_cast<size_t>(c - t.columns.data()); }

bool IsSlice(Relation::Op op) {
  return op == Relation::Op::kLt || op == Relation::Op::kLe || op == Relation::Op::kGt || op == Relation::Op::kGe;
}

Result<std::string> BindOne(const Term& t, const ColumnDef& c, const BindContext& ctx) {
  TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(t, c.type, c.name, ctx));
  if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value in condition for column " + c.name);
  return b.bytes;
}

Result<Filter> MakeFilter(const TableSchema& t, const ColumnDef& c, const Relation& r, const BindContext& ctx) {
  Filter f;
  f.column = IndexOf(t, &c);
  f.op = r.op;
  if (r.op == Relation::Op::kIsNotNull) return f;
  if (r.op == Relation::Op::kIn) {
    TESSERA_ASSIGN_OR_RETURN(f.values, EqualityValues(r, c, ctx));
    return f;
  }
  if (r.op == Relation::Op::kLike) return Status::InvalidArgument("LIKE restrictions are not supported");
  const CqlType* type = &c.type;
  CqlType element = CqlType::Scalar(TypeKind::kInt);
  if (r.op == Relation::Op::kContains || r.op == Relation::Op::kContainsKey) {
    if (!c.type.IsCollection()) return Status::InvalidArgument("Cannot use CONTAINS on non-collection column " + c.name);
    bool key = r.op == Relation::Op::kContainsKey;
    if (key && c.type.kind() != TypeKind::kMap) return Status::InvalidArgument("Cannot use CONTAINS KEY on non-map column " + c.name);
    element = c.type.kind() == TypeKind::kMap && !key ? c.type.params()[1] : c.type.params()[0];
    type = &element;
  }
  if (r.lhs == Relation::Lhs::kMapElement) {
    if (c.type.kind() != TypeKind::kMap) return Status::InvalidArgument("Column " + c.name + " is not a map");
    TESSERA_ASSIGN_OR_RETURN(BoundValue k, BindTerm(*r.map_key, c.type.params()[0], c.name, ctx));
    f.map_key = k.bytes;
    element = c.type.params()[1];
    type = &element;
  }
  // As Cassandra (SingleColumnRelation): durations have no order.
  if (IsSlice(r.op) && ReferencesDuration(*type)) {
    return Status::InvalidArgument("Slice restrictions are not supported on duration columns");
  }
  TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(r.value, *type, c.name, ctx));
  if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Unsupported null value for column " + c.name);
  f.values.push_back(b.bytes);
  return f;
}

bool IsTokenCall(const Term& t) {
  if (t.kind != Term::Kind::kFunctionCall) return false;
  std::string name = t.function_name;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name == "token" || name == "system.token";
}

// A token bound: a bigint, or token(<partition key values>) as YCSB's
// Cassandra binding writes it (token(y_id) >= token(?)).
Result<PartitionToken> BindToken(const TableSchema& t, const Term& term, const BindContext& ctx) {
  if (IsTokenCall(term)) {
    const auto pk = t.PartitionKey();
    if (term.elements.size() != pk.size()) {
      return Status::InvalidArgument("Invalid number of arguments in call to function token: " +
                                     std::to_string(pk.size()) + " required but " +
                                     std::to_string(term.elements.size()) + " provided");
    }
    std::vector<std::string> values;
    for (size_t i = 0; i < pk.size(); ++i) {
      TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(term.elements[i], pk[i]->type, pk[i]->name, ctx));
      if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value for " + pk[i]->name);
      values.push_back(std::move(b.bytes));
    }
    std::vector<std::string_view> views(values.begin(), values.end());
    return TokenOfPartitionKey(views);
  }
  TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(term, CqlType::Scalar(TypeKind::kBigint), "partition key token", ctx));
  if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null token");
  return static_cast<PartitionToken>(GetBigEndian64(b.bytes.data()));
}

}  // namespace

Result<ReadPlan> PlanRead(const TableSchema& t, const std::vector<Relation>& where, bool allow_filtering,
                          const BindContext& ctx) {
  ReadPlan plan;
  std::map<std::string, const Relation*> eq;  // = / IN on a single key column
  std::map<std::string, std::vector<const Relation*>> slices;
  std::vector<const Relation*> token_relations, multi_column, others;
  for (const auto& r : where) {
    if (r.lhs == Relation::Lhs::kToken) {
      token_relations.push_back(&r);
      continue;
    }
    if (r.lhs == Relation::Lhs::kMultiColumn) {
      multi_column.push_back(&r);
      continue;
    }
    const ColumnDef* c = t.FindColumn(r.columns[0]);
    if (!c) return Status::InvalidArgument("Undefined column name " + r.columns[0]);
    if (r.lhs == Relation::Lhs::kField) {  // as Cassandra 4.1: fields restrict only IF conditions
      return Status::InvalidArgument("Restrictions on fields of user type column " + c->name + " are not supported");
    }
    bool key = c->kind == ColumnKind::kPartitionKey || c->kind == ColumnKind::kClustering;
    if (key && r.lhs == Relation::Lhs::kColumn && (r.op == Relation::Op::kEq || r.op == Relation::Op::kIn)) {
      if (!eq.emplace(c->name, &r).second) return Status::InvalidArgument(c->name + " cannot be restricted by more than one relation if it includes an Equal");
    } else if (key && r.lhs == Relation::Lhs::kColumn && IsSlice(r.op)) {
      slices[c->name].push_back(&r);
    } else {
      others.push_back(&r);
    }
  }
  bool needs_filtering = !others.empty();

  // --- partitions ---
  auto pk = t.PartitionKey();
  size_t pk_eq = std::count_if(pk.begin(), pk.end(), [&](const ColumnDef* c) { return eq.count(c->name) > 0; });
  bool full_pk = pk_eq == pk.size();
  if (full_pk) {
    if (!token_relations.empty()) return Status::InvalidArgument("Token restrictions cannot be combined with partition key equality");
    std::vector<std::vector<std::string>> values;
    for (const auto* c : pk) {
      TESSERA_ASSIGN_OR_RETURN(auto v, EqualityValues(*eq[c->name], *c, ctx));
      values.push_back(std::move(v));
    }
    plan.kind = ReadPlan::Kind::kPartitions;
    plan.partition_keys = CartesianProduct(values);
    // Storage order (token, then key) and each partition once.
    std::vector<std::pair<std::string, std::vector<std::string>>> ordered;
    for (auto& key : plan.partition_keys) {
      std::string pos;
      PartitionToken token;
      std::vector<std::string_view> views(key.begin(), key.end());
      TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, views, &pos, &token));
      ordered.emplace_back(LogicalKey(t, pos), std::move(key));  // bucketed tables: key order, not bucket order
    }
    std::sort(ordered.begin(), ordered.end());
    ordered.erase(std::unique(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), ordered.end());
    plan.partition_keys.clear();
    for (auto& [pos, key] : ordered) plan.partition_keys.push_back(std::move(key));
  } else {
    plan.kind = ReadPlan::Kind::kRange;
    plan.range = WholeTableRange(t);
    PartitionToken lo = kMinToken, hi = kMaxToken;
    bool lo_inc = true, hi_inc = true;
    for (const Relation* r : token_relations) {
      if (r->columns.size() != pk.size()) return Status::InvalidArgument("The token function arguments must be the partition key columns, in order");
      for (size_t i = 0; i < pk.size(); ++i) {
        if (r->columns[i] != pk[i]->name) return Status::InvalidArgument("The token function arguments must be the partition key columns, in order");
      }
      TESSERA_ASSIGN_OR_RETURN(PartitionToken v, BindToken(t, r->value, ctx));
      switch (r->op) {
        case Relation::Op::kGt: if (v >= lo) { lo = v; lo_inc = false; } break;
        case Relation::Op::kGe: if (v > lo) { lo = v; lo_inc = true; } break;
        case Relation::Op::kLt: if (v <= hi) { hi = v; hi_inc = false; } break;
        case Relation::Op::kLe: if (v < hi) { hi = v; hi_inc = true; } break;
        case Relation::Op::kEq: lo = hi = v; lo_inc = hi_inc = true; break;
        default: return Status::InvalidArgument("Unsupported operator on token()");
      }
    }
    if (!token_relations.empty()) {
      if (t.distribution != Distribution::kHash) return Status::InvalidArgument("token() restrictions apply to hash-distributed tables; use key ranges on range tables");
      plan.range = TokenRange(t, lo, lo_inc, hi, hi_inc);
    }
    // Range tables: a key range on a one-column partition key.
    if (t.distribution == Distribution::kRange && pk.size() == 1 && slices.count(pk[0]->name) && pk_eq == 0) {
      std::optional<std::vector<std::string>> start, end;
      bool start_inc = true, end_inc = true;
      for (const Relation* r : slices[pk[0]->name]) {
        TESSERA_ASSIGN_OR_RETURN(std::string v, BindOne(r->value, *pk[0], ctx));
        if (r->op == Relation::Op::kGt || r->op == Relation::Op::kGe) {
          start = std::vector<std::string>{v};
          start_inc = r->op == Relation::Op::kGe;
        } else {
          end = std::vector<std::string>{v};
          end_inc = r->op == Relation::Op::kLe;
        }
      }
      TESSERA_ASSIGN_OR_RETURN(plan.range, PartitionKeyRange(t, start ? &*start : nullptr, start_inc, end ? &*end : nullptr, end_inc));
      slices.erase(pk[0]->name);
    }
    if (pk_eq > 0 || !slices.empty() || !multi_column.empty()) needs_filtering = true;
    for (const auto* c : pk) {  // partial partition-key restrictions become filters
      if (eq.count(c->name)) others.push_back(eq[c->name]);
      if (slices.count(c->name)) {
        for (const Relation* r : slices[c->name]) others.push_back(r);
        slices.erase(c->name);
      }
    }
  }

  // --- clustering ---
  auto ck = t.Clustering();
  if (plan.kind == ReadPlan::Kind::kPartitions) {
    std::vector<std::vector<std::string>> prefix_values;
    size_t i = 0;
    for (; i < ck.size() && eq.count(ck[i]->name); ++i) {
      TESSERA_ASSIGN_OR_RETURN(auto v, EqualityValues(*eq[ck[i]->name], *ck[i], ctx));
      prefix_values.push_back(std::move(v));
    }
    plan.clustering_prefixes = CartesianProduct(prefix_values);
    // A multi-column relation on the columns right after the prefix.
    for (const Relation* r : multi_column) {
      bool aligned = r->columns.size() + i <= ck.size();
      for (size_t k = 0; aligned && k < r->columns.size(); ++k) aligned = r->columns[k] == ck[i + k]->name;
      if (aligned && r->op == Relation::Op::kIn && plan.clustering_prefixes.size() == 1 && !r->in_marker) {
        // (a, b) IN ((1, 2), (3, 4)): one full prefix per tuple.
        std::vector<std::vector<std::string>> prefixes;
        for (const Term& tuple : r->in_values) {
          if (tuple.kind != Term::Kind::kTuple || tuple.elements.size() != r->columns.size()) {
            return Status::InvalidArgument("Expected " + std::to_string(r->columns.size()) + " elements in value tuple");
          }
          std::vector<std::string> values = plan.clustering_prefixes[0];
          for (size_t k = 0; k < r->columns.size(); ++k) {
            TESSERA_ASSIGN_OR_RETURN(std::string v, BindOne(tuple.elements[k], *ck[i + k], ctx));
            values.push_back(std::move(v));
          }
          prefixes.push_back(std::move(values));
        }
        plan.clustering_prefixes = std::move(prefixes);
        continue;
      }
      if (!aligned || r->value.kind != Term::Kind::kTuple || plan.clustering_prefixes.size() != 1 ||
          !(IsSlice(r->op) || r->op == Relation::Op::kEq)) {
        return Status::InvalidArgument("Unsupported multi-column relation on clustering columns");
      }
      if (r->value.elements.size() != r->columns.size()) {  // (c, d) > (5)
        return Status::InvalidArgument("Expected " + std::to_string(r->columns.size()) + " elements in value tuple, but got " +
                                       std::to_string(r->value.elements.size()));
      }
      std::vector<std::string> values = plan.clustering_prefixes[0];
      for (size_t k = 0; k < r->columns.size(); ++k) {
        TESSERA_ASSIGN_OR_RETURN(std::string v, BindOne(r->value.elements.at(k), *ck[i + k], ctx));
        values.push_back(std::move(v));
      }
      if (r->op == Relation::Op::kEq) {
        plan.clustering_prefixes[0] = values;
        continue;
      }
      bool lower = (r->op == Relation::Op::kGt || r->op == Relation::Op::kGe) == (ck[i]->order == SortOrder::kAsc);
      ClusteringBound b{values, r->op == Relation::Op::kGe || r->op == Relation::Op::kLe};
      (lower ? plan.lower : plan.upper) = b;
    }
    if (i < ck.size() && slices.count(ck[i]->name) && plan.clustering_prefixes.size() == 1) {
      for (const Relation* r : slices[ck[i]->name]) {
        TESSERA_ASSIGN_OR_RETURN(std::string v, BindOne(r->value, *ck[i], ctx));
        ClusteringBound b{plan.clustering_prefixes[0], r->op == Relation::Op::kGe || r->op == Relation::Op::kLe};
        b.prefix.push_back(v);
        bool lower = (r->op == Relation::Op::kGt || r->op == Relation::Op::kGe) == (ck[i]->order == SortOrder::kAsc);
        (lower ? plan.lower : plan.upper) = b;
      }
      slices.erase(ck[i]->name);
    }
    // Clustering restrictions not served above are filters.
    for (size_t k = 0; k < ck.size(); ++k) {
      bool served_eq = k < i;
      if (!served_eq && eq.count(ck[k]->name)) {
        if (!allow_filtering) {
          return Status::InvalidArgument("PRIMARY KEY column \"" + ck[k]->name + "\" cannot be restricted as preceding column \"" +
                                         ck[std::min(i, ck.size() - 1)]->name + "\" is not restricted");
        }
        others.push_back(eq[ck[k]->name]);
      }
      if (slices.count(ck[k]->name)) {
        if (!allow_filtering) {
          return Status::InvalidArgument("Clustering column \"" + ck[k]->name + "\" cannot be restricted (preceding column \"" +
                                         ck[std::min(i, ck.size() - 1)]->name + "\" is restricted by a non-EQ relation)");
        }
        for (const Relation* r : slices[ck[k]->name]) others.push_back(r);
      }
    }
  } else {
    for (const auto* c : ck) {
      if (eq.count(c->name)) others.push_back(eq[c->name]);
      if (slices.count(c->name)) {
        for (const Relation* r : slices[c->name]) others.push_back(r);
      }
    }
    if (!multi_column.empty()) return Status::InvalidArgument("Multi-column relations need the full partition key");
  }
  if (!others.empty()) needs_filtering = true;
  if (needs_filtering && !allow_filtering) return Status::InvalidArgument(kNeedsFiltering);
  for (const Relation* r : others) {
    const ColumnDef* c = t.FindColumn(r->columns[0]);
    TESSERA_ASSIGN_OR_RETURN(Filter f, MakeFilter(t, *c, *r, ctx));
    plan.filters.push_back(std::move(f));
  }
  plan.uses_filtering = needs_filtering;
  return plan;
}

}  // namespace tessera::cql
