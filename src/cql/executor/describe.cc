#include "cql/executor/describe.h"

#include <algorithm>

#include "cql/executor/system_keyspaces.h"

namespace tessera::cql {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

// A stored option value as CQL: maps, numbers and booleans as they are, the rest quoted.
std::string OptionValue(const std::string& v) {
  if (!v.empty() && v.front() == '{') return v;
  if (v == "true" || v == "false") return v;
  const bool number = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == 'e' || c == 'E';
  });
  return number ? v : Quote(v);
}

std::string Qualified(const std::string& ks, const std::string& name) {
  return QuoteIdentifier(ks) + "." + QuoteIdentifier(name);
}

// name(type, type): how DESCRIBE names an overload.
template <typename Definition>
std::string Signature(const Definition& d) {
  return d.name + "(" + JoinedTypes(d.argument_types) + ")";
}

// "a, b": key columns as CQL identifiers.
std::string ColumnNames(const std::vector<const ColumnDef*>& cols) {
  std::string out;
  for (const ColumnDef* c : cols) out += (out.empty() ? "" : ", ") + QuoteIdentifier(c->name);
  return out;
}

struct Described {
  std::string keyspace, type, name, statement;
};

// A table, then its indexes and materialized views (cqlsh's order).
void AddTable(const Database& db, const TableSchema& t, std::vector<Described>* out) {
  if (t.is_view()) {
    out->push_back({t.keyspace, "materialized_view", t.name, CreateViewCql(t)});
    return;
  }
  out->push_back({t.keyspace, "table", t.name, CreateTableCql(t)});
  std::vector<IndexDef> indexes = t.indexes;
  std::sort(indexes.begin(), indexes.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const IndexDef& i : indexes) out->push_back({t.keyspace, "index", i.name, CreateIndexCql(t, i)});
  std::vector<std::string> views = t.views;
  std::sort(views.begin(), views.end());
  for (const std::string& v : views) {
    if (auto view = db.catalog().GetTable(t.keyspace, v); view.ok() && (*view)->is_view()) {
      out->push_back({t.keyspace, "materialized_view", v, CreateViewCql(**view)});
    }
  }
}

void AddKeyspace(const Database& db, const KeyspaceMetadata& ks, bool only, std::vector<Described>* out) {
  out->push_back({ks.name, "keyspace", ks.name, CreateKeyspaceCql(ks)});
  if (only) return;
  for (const CqlType& type : db.catalog().Types(ks.name)) {
    out->push_back({ks.name, "type", type.udt_name(), CreateTypeCql(type)});
  }
  // Functions before aggregates, which name them; both before tables.
  for (const UserFunction& f : db.catalog().Functions(ks.name)) out->push_back({ks.name, "function", Signature(f), CreateFunctionCql(f)});
  for (const UserAggregate& a : db.catalog().Aggregates(ks.name)) out->push_back({ks.name, "aggregate", Signature(a), CreateAggregateCql(a)});
  for (const auto& t : db.catalog().Tables(ks.name)) {
    if (t->index_of.empty() && !t->is_view()) AddTable(db, *t, out);  // views follow their base
  }
}

ResultSet Rows(std::vector<Described> described, bool with_statement) {
  ResultSet rs;
  const CqlType text = CqlType::Scalar(TypeKind::kText);
  for (const char* name : {"keyspace_name", "type", "name", "create_statement"}) {
    if (!with_statement && std::string(name) == "create_statement") break;
    rs.columns.push_back(ColumnSpec{"", "", name, text});
  }
  for (auto& d : described) {
    std::vector<std::optional<std::string>> row{std::move(d.keyspace), std::move(d.type), std::move(d.name)};
    if (with_statement) row.emplace_back(std::move(d.statement));
    rs.rows.push_back(std::move(row));
  }
  return rs;
}

Status NoKeyspaceToDescribe() { return Status::InvalidArgument("No keyspace specified and no current keyspace"); }

}  // namespace

std::string CreateKeyspaceCql(const KeyspaceMetadata& ks) {
  std::string replication;
  for (const auto& [k, v] : ks.replication) {
    replication += (replication.empty() ? "" : ", ") + Quote(k) + ": " + Quote(v);
  }
  return "CREATE KEYSPACE " + QuoteIdentifier(ks.name) + " WITH replication = {" + replication +
         "}  AND durable_writes = " + (ks.durable_writes ? "true" : "false") + ";";
}

std::string CreateTypeCql(const CqlType& type) {
  std::string s = "CREATE TYPE " + Qualified(type.udt_keyspace(), type.udt_name()) + " (\n";
  for (size_t i = 0; i < type.params().size(); ++i) {
    s += "    " + QuoteIdentifier(type.field_names()[i]) + " " + type.params()[i].ToCql() +
         (i + 1 < type.params().size() ? ",\n" : "\n");
  }
  return s + ");";
}

std::string CreateTableCql(const TableSchema& t) {
  std::string s = "CREATE TABLE " + Qualified(t.keyspace, t.name) + " (\n";
  for (const ColumnDef& c : t.columns) {
    s += "    " + QuoteIdentifier(c.name) + " " + c.type.ToCql() + (c.kind == ColumnKind::kStatic ? " static" : "") + ",\n";
  }
  const auto pk = t.PartitionKey();
  const auto ck = t.Clustering();
  std::string key = pk.size() == 1 ? ColumnNames(pk) : "(" + ColumnNames(pk) + ")";
  if (!ck.empty()) key += ", " + ColumnNames(ck);
  s += "    PRIMARY KEY (" + key + ")\n) WITH ";
  return s + TableOptionsCql(t);
}

// The WITH clause of a table or view: CLUSTERING ORDER BY, then the options.
std::string TableOptionsCql(const TableSchema& t) {
  std::string s;
  const auto ck = t.Clustering();
  std::vector<std::string> options;
  if (!ck.empty()) {
    std::string order;
    for (const ColumnDef* c : ck) {
      order += (order.empty() ? "" : ", ") + QuoteIdentifier(c->name) + (c->order == SortOrder::kDesc ? " DESC" : " ASC");
    }
    options.push_back("CLUSTERING ORDER BY (" + order + ")");
  }
  options.push_back("comment = " + Quote(t.options.comment));
  options.push_back("default_time_to_live = " + std::to_string(t.options.default_time_to_live));
  options.push_back("gc_grace_seconds = " + std::to_string(t.options.gc_grace_seconds));
  for (const auto& [k, v] : t.options.extra) options.push_back(k + " = " + OptionValue(v));
  // Tessera's layout options.
  options.push_back(std::string("distribution = '") + ToString(t.distribution) + "'");
  if (t.distribution == Distribution::kHash) options.push_back("initial_tablets = " + std::to_string(t.options.initial_tablets));
  if (t.buckets.enabled()) {
    options.push_back("buckets = " + (t.buckets.automatic ? std::string("'auto'") : std::to_string(t.buckets.current_count())));
  }
  if (t.partition_buckets.enabled()) {
    options.push_back("partition_buckets = " + (t.partition_buckets.automatic
                                                    ? std::string("'auto'")
                                                    : std::to_string(t.partition_buckets.counts.back())));
  }
  for (size_t i = 0; i < options.size(); ++i) s += (i ? "\n    AND " : "") + options[i];
  return s + ";";
}

std::string CreateViewCql(const TableSchema& t) {
  std::string select;
  if (t.view->include_all_columns) {
    select = "*";
  } else {
    for (const ColumnDef& c : t.columns) select += (select.empty() ? "" : ", ") + QuoteIdentifier(c.name);
  }
  const auto pk = t.PartitionKey();
  const auto ck = t.Clustering();
  std::string key = "(" + ColumnNames(pk) + ")";
  if (!ck.empty()) key += ", " + ColumnNames(ck);
  return "CREATE MATERIALIZED VIEW " + Qualified(t.keyspace, t.name) + " AS\n    SELECT " + select + "\n    FROM " +
         Qualified(t.keyspace, t.view->base_table) + "\n    WHERE " + t.view->where_clause + "\n    PRIMARY KEY (" + key +
         ")\n WITH " + TableOptionsCql(t);
}

std::string CreateIndexCql(const TableSchema& t, const IndexDef& index) {
  const ColumnDef* c = t.FindColumnById(index.column_id);
  const std::string target = c ? IndexTargetText(index, c->name, c->type.IsMultiCell()) : "?";
  if (index.is_vector()) {
    return "CREATE CUSTOM INDEX " + QuoteIdentifier(index.name) + " ON " + Qualified(t.keyspace, t.name) + " (" + target +
           ") USING '" + index.class_name + "' WITH OPTIONS = {'similarity_function': '" +
           SimilarityName(index.similarity) + "'};";
  }
  return "CREATE INDEX " + QuoteIdentifier(index.name) + " ON " + Qualified(t.keyspace, t.name) + " (" + target + ");";
}

std::string CreateFunctionCql(const UserFunction& f) {
  std::string out = "CREATE FUNCTION " + Qualified(f.keyspace, f.name) + "(";
  for (size_t i = 0; i < f.argument_names.size(); ++i) {
    out += (i ? ", " : "") + QuoteIdentifier(f.argument_names[i]) + " " + f.argument_types[i].ToCql();
  }
  out += ")\n    ";
  out += f.called_on_null_input ? "CALLED ON NULL INPUT" : "RETURNS NULL ON NULL INPUT";
  out += "\n    RETURNS " + f.return_type.ToCql() + "\n    LANGUAGE " + f.language + "\n    AS ";
  // $$ quoting keeps the body as written, unless the body holds $$ itself.
  out += f.body.find("$$") == std::string::npos ? "$$" + f.body + "$$" : Quote(f.body);
  return out + ";";
}

std::string CreateAggregateCql(const UserAggregate& a) {
  std::string out = "CREATE AGGREGATE " + Qualified(a.keyspace, a.name) + "(" + JoinedTypes(a.argument_types);
  out += ")\n    SFUNC " + QuoteIdentifier(a.state_function) + "\n    STYPE " + a.state_type.ToCql();
  if (!a.final_function.empty()) out += "\n    FINALFUNC " + QuoteIdentifier(a.final_function);
  if (a.initial_state) out += "\n    INITCOND " + a.initial_condition_literal;
  return out + ";";
}

Result<ResultSet> ExecuteDescribe(const Database& db, const DescribeStatement& s, const std::string& current) {
  using T = DescribeStatement::Target;
  const Catalog& catalog = db.catalog();
  std::vector<Described> out;
  const std::string ks = s.name.keyspace.empty() ? current : s.name.keyspace;
  auto keyspace = [&](const std::string& name) -> Result<KeyspaceMetadata> {
    if (name.empty()) return NoKeyspaceToDescribe();
    auto meta = catalog.GetKeyspace(name);
    if (!meta.ok()) return Status::InvalidArgument("'" + name + "' not found in keyspaces");
    return meta;
  };
  switch (s.target) {
    case T::kSchema:
      for (const auto& k : catalog.Keyspaces()) {
        if (s.full || !IsSystemKeyspace(k.name)) AddKeyspace(db, k, false, &out);
      }
      return Rows(std::move(out), true);
    case T::kKeyspaces:
      for (const auto& k : catalog.Keyspaces()) out.push_back({k.name, "keyspace", k.name, ""});
      return Rows(std::move(out), false);
    case T::kTables:
    case T::kTypes:
    case T::kFunctions:
    case T::kAggregates:
      for (const auto& k : catalog.Keyspaces()) {
        if (!current.empty() && k.name != current) continue;
        if (s.target == T::kTypes) {
          for (const CqlType& type : catalog.Types(k.name)) out.push_back({k.name, "type", type.udt_name(), ""});
          continue;
        }
        if (s.target == T::kFunctions) {
          for (const UserFunction& f : catalog.Functions(k.name)) out.push_back({k.name, "function", Signature(f), ""});
          continue;
        }
        if (s.target == T::kAggregates) {
          for (const UserAggregate& a : catalog.Aggregates(k.name)) out.push_back({k.name, "aggregate", Signature(a), ""});
          continue;
        }
        for (const auto& t : catalog.Tables(k.name)) {
          if (t->index_of.empty() && !t->is_view()) out.push_back({k.name, "table", t->name, ""});
        }
      }
      return Rows(std::move(out), false);
    case T::kKeyspace: {
      TESSERA_ASSIGN_OR_RETURN(auto meta, keyspace(s.name.name.empty() ? current : s.name.name));
      AddKeyspace(db, meta, s.only, &out);
      return Rows(std::move(out), true);
    }
    case T::kTable: {
      TESSERA_RETURN_IF_ERROR(keyspace(ks).status());
      auto t = catalog.GetTable(ks, s.name.name);
      if (!t.ok() || !(*t)->index_of.empty()) {
        return Status::InvalidArgument("'" + s.name.name + "' not found in keyspace '" + ks + "'");
      }
      AddTable(db, **t, &out);
      return Rows(std::move(out), true);
    }
    case T::kView: {
      TESSERA_RETURN_IF_ERROR(keyspace(ks).status());
      auto t = catalog.GetTable(ks, s.name.name);
      if (!t.ok() || !(*t)->is_view()) {
        return Status::InvalidArgument("Materialized view '" + s.name.name + "' not found in '" + ks + "'");
      }
      AddTable(db, **t, &out);
      return Rows(std::move(out), true);
    }
    case T::kType: {
      TESSERA_RETURN_IF_ERROR(keyspace(ks).status());
      auto type = catalog.GetType(ks, s.name.name);
      if (!type) return Status::InvalidArgument("User defined type '" + s.name.name + "' not found in '" + ks + "'");
      out.push_back({ks, "type", s.name.name, CreateTypeCql(*type)});
      return Rows(std::move(out), true);
    }
    case T::kIndex: {
      TESSERA_RETURN_IF_ERROR(keyspace(ks).status());
      auto found = db.FindIndex(ks, s.name.name);
      if (!found.ok()) return Status::InvalidArgument("Index '" + s.name.name + "' not found in '" + ks + "'");
      out.push_back({ks, "index", s.name.name, CreateIndexCql(*found->first, found->second)});
      return Rows(std::move(out), true);
    }
    case T::kFunction:
    case T::kAggregate: {
      TESSERA_RETURN_IF_ERROR(keyspace(ks).status());
      if (s.target == T::kFunction) {
        for (const UserFunction& f : catalog.Functions(ks)) {
          if (f.name == s.name.name) out.push_back({ks, "function", Signature(f), CreateFunctionCql(f)});
        }
      } else {
        for (const UserAggregate& a : catalog.Aggregates(ks)) {
          if (a.name == s.name.name) out.push_back({ks, "aggregate", Signature(a), CreateAggregateCql(a)});
        }
      }
      if (out.empty()) {
        return Status::InvalidArgument(std::string(s.target == T::kFunction ? "User defined function '" : "User defined aggregate '") +
                                       s.name.name + "' not found in '" + ks + "'");
      }
      return Rows(std::move(out), true);
    }
    case T::kName: {
      if (s.name.keyspace.empty() && catalog.GetKeyspace(s.name.name).ok()) {
        DescribeStatement k = s;
        k.target = T::kKeyspace;
        return ExecuteDescribe(db, k, current);
      }
      TESSERA_RETURN_IF_ERROR(keyspace(ks).status());
      for (T target : {T::kTable, T::kIndex, T::kType, T::kFunction, T::kAggregate}) {
        DescribeStatement k = s;
        k.target = target;
        auto r = ExecuteDescribe(db, k, current);
        if (r.ok()) return r;
      }
      return Status::InvalidArgument("'" + s.name.name + "' not found in keyspace '" + ks + "'");
    }
  }
  return Status::InvalidArgument("unsupported DESCRIBE");
}

}  // namespace tessera::cql
