#include "cql/executor/where_clause.h"

#include <algorithm>
#include <map>

#include "types/serialization.h"

namespace tessera::cql {
namespace {

std::string Names(const std::vector<const ColumnDef*>& cols);

}  // namespace

std::vector<std::vector<std::string>> CartesianProduct(const std::vector<std::vector<std::string>>& columns) {
  std::vector<std::vector<std::string>> out{{}};
  for (const auto& values : columns) {
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out) {
      for (const auto& v : values) {
        auto k = prefix;
        k.push_back(v);
        next.push_back(std::move(k));
      }
    }
    out = std::move(next);
  }
  return out;
}

namespace {

std::string Names(const std::vector<const ColumnDef*>& cols) {
  std::string s;
  for (const auto* c : cols) s += (s.empty() ? "" : ", ") + c->name;
  return s;
}

}  // namespace

Result<std::vector<std::string>> EqualityValues(const Relation& r, const ColumnDef& column, const BindContext& ctx) {
  std::vector<std::string> out;
  auto one = [&](const Term& t) -> Status {
    TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(t, column.type, column.name, ctx));
    if (b.kind == BoundValue::Kind::kNull) return Status::InvalidArgument("Invalid null value in condition for column " + column.name);
    if (b.kind == BoundValue::Kind::kUnset) return Status::InvalidArgument("Invalid unset value for column " + column.name);
    out.push_back(std::move(b.bytes));
    return Status::OK();
  };
  if (r.op == Relation::Op::kEq) {
    TESSERA_RETURN_IF_ERROR(one(r.value));
    return out;
  }
  if (r.in_marker) {  // IN ? binds a list of values
    CqlType list = CqlType::List(column.type, /*frozen=*/true);
    TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(r.value, list, column.name, ctx));
    if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value for IN restriction on " + column.name);
    TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(list, b.bytes));
    for (const auto& e : v.as_elements()) {
      std::string bytes;
      TESSERA_RETURN_IF_ERROR(Serialize(column.type, e, &bytes));
      out.push_back(std::move(bytes));
    }
    return out;
  }
  for (const auto& t : r.in_values) TESSERA_RETURN_IF_ERROR(one(t));
  return out;
}

Result<WriteTarget> AnalyzeWriteWhere(const TableSchema& t, const std::vector<Relation>& where, WriteKind kind,
                                      const BindContext& ctx) {
  std::map<std::string, const Relation*> eq;            // column -> = / IN relation
  std::map<std::string, std::vector<const Relation*>> slices;
  for (const auto& r : where) {
    if (r.lhs != Relation::Lhs::kColumn) return Status::InvalidArgument("Only column restrictions are supported in writes");
    const ColumnDef* c = t.FindColumn(r.columns[0]);
    if (!c) return Status::InvalidArgument("Undefined column name " + r.columns[0]);
    if (c->kind != ColumnKind::kPartitionKey && c->kind != ColumnKind::kClustering) {
      return Status::InvalidArgument("Non PRIMARY KEY columns found in where clause: " + c->name);
    }
    if (r.op == Relation::Op::kEq || r.op == Relation::Op::kIn) {
      if (!eq.emplace(c->name, &r).second) return Status::InvalidArgument(c->name + " cannot be restricted by more than one relation if it includes an Equal");
    } else if (r.op == Relation::Op::kLt || r.op == Relation::Op::kLe || r.op == Relation::Op::kGt || r.op == Relation::Op::kGe) {
      if (c->kind == ColumnKind::kPartitionKey) return Status::InvalidArgument("Only EQ and IN relation are supported on the partition key");
      slices[c->name].push_back(&r);
    } else {
      return Status::InvalidArgument("Unsupported restriction on " + c->name + " in a write");
    }
  }
  WriteTarget out;
  std::vector<std::vector<std::string>> pk_values;
  std::vector<const ColumnDef*> missing;
  for (const auto* c : t.PartitionKey()) {
    auto it = eq.find(c->name);
    if (it == eq.end()) {
      missing.push_back(c);
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(auto values, EqualityValues(*it->second, *c, ctx));
    pk_values.push_back(std::move(values));
  }
  if (!missing.empty()) return Status::InvalidArgument("Some partition key parts are missing: " + Names(missing));
  out.partition_keys = CartesianProduct(pk_values);

  std::vector<std::vector<std::string>> ck_values;
  auto clustering = t.Clustering();
  size_t i = 0;
  for (; i < clustering.size(); ++i) {
    auto it = eq.find(clustering[i]->name);
    if (it == eq.end()) break;
    TESSERA_ASSIGN_OR_RETURN(auto values, EqualityValues(*it->second, *clustering[i], ctx));
    ck_values.push_back(std::move(values));
  }
  out.full_clustering = i == clustering.size();
  out.clustering = CartesianProduct(ck_values);
  const bool no_clustering = i == 0 && std::none_of(clustering.begin(), clustering.end(), [&](const ColumnDef* c) {
    return slices.count(c->name) > 0;
  });
  if (kind == WriteKind::kStaticUpdate) {
    // Cassandra: naming a row while writing only static columns suggests something unintended.
    if (!no_clustering) {
      return Status::InvalidArgument(
          "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns");
    }
    out.clustering.clear();  // the static row only
    return out;
  }
  if (kind != WriteKind::kDelete && !out.full_clustering) {
    std::vector<const ColumnDef*> rest(clustering.begin() + static_cast<long>(i), clustering.end());
    return Status::InvalidArgument("Some clustering keys are missing: " + Names(rest));
  }
  // Restrictions after the equal prefix: only a slice on the next column (DELETE).
  for (size_t k = i; k < clustering.size(); ++k) {
    bool restricted = eq.count(clustering[k]->name) || slices.count(clustering[k]->name);
    if (restricted && (k != i || eq.count(clustering[k]->name))) {
      return Status::InvalidArgument("PRIMARY KEY column \"" + clustering[k]->name +
                                     "\" cannot be restricted as preceding column \"" + clustering[i]->name +
                                     "\" is not restricted");
    }
  }
  if (i < clustering.size() && slices.count(clustering[i]->name)) {
    if (kind == WriteKind::kUpdate) return Status::InvalidArgument("Slice restrictions are not supported on the clustering columns in UPDATE statements");
    if (out.clustering.size() != 1) return Status::InvalidArgument("IN restrictions cannot be combined with a range deletion");
    for (const Relation* r : slices[clustering[i]->name]) {
      TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(r->value, clustering[i]->type, clustering[i]->name, ctx));
      if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value in condition for column " + clustering[i]->name);
      ClusteringBound bound{out.clustering[0], r->op == Relation::Op::kGe || r->op == Relation::Op::kLe};
      bound.prefix.push_back(b.bytes);
      // In clustering order a DESC column's "greater" values come first.
      bool lower = (r->op == Relation::Op::kGt || r->op == Relation::Op::kGe) == (clustering[i]->order == SortOrder::kAsc);
      (lower ? out.slice_start : out.slice_end) = bound;
    }
  }
  return out;
}

}  // namespace tessera::cql
