#include "cql/executor/insert_json.h"

#include <algorithm>
#include <set>

#include "cql/executor/json_values.h"

namespace tessera::cql {

Result<InsertStatement> ExpandInsertJson(const TableSchema& t, const InsertStatement& s, const BindContext& bind) {
  TESSERA_ASSIGN_OR_RETURN(BoundValue text, BindTerm(*s.json, CqlType::Scalar(TypeKind::kText), "[json]", bind));
  if (text.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Got null for INSERT JSON values");
  TESSERA_ASSIGN_OR_RETURN(auto members, ParseJsonObject(text.bytes));
  InsertStatement out;
  out.table = s.table;
  out.if_not_exists = s.if_not_exists;
  out.using_clause = s.using_clause;
  std::set<std::string> named;
  for (const auto& [key, value] : members) {
    std::string name = key;
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    } else {
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    }
    const ColumnDef* c = t.FindColumn(name);
    if (c == nullptr) return Status::InvalidArgument("JSON values map contains unrecognized column: " + name);
    TESSERA_ASSIGN_OR_RETURN(Term term, JsonToTerm(value, c->type, c->name));
    // Checked here, so that a value the literal binder refuses is reported as a JSON value.
    if (auto bound = BindTerm(term, c->type, c->name, bind); !bound.ok()) {
      return Status::InvalidArgument("Error decoding JSON value for " + c->name + ": " + bound.status().message());
    }
    out.columns.push_back(c->name);
    out.values.push_back(std::move(term));
    named.insert(c->name);
  }
  if (!s.json_default_unset) {
    for (const auto& c : t.columns) {
      if (named.count(c.name) || c.kind == ColumnKind::kPartitionKey || c.kind == ColumnKind::kClustering) continue;
      out.columns.push_back(c.name);
      out.values.push_back(Term{});  // null
    }
  }
  return out;
}

}  // namespace tessera::cql
