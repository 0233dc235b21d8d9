#include "cql/executor/view_statements.h"

#include <algorithm>
#include <set>

#include "db/secondary_index.h"
#include "types/value_compare.h"

namespace tessera::cql {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Cassandra 4.1's checks of a view's key column. The checks of the whole
// definition against its base (counters, statics, the base's key columns, at
// most one other) are ValidateViewDefinition's, run by Database::CreateView.
Status CheckKeyColumn(const ColumnDef& c) {
  if (c.type.IsMultiCell()) {
    if (c.type.IsCollection()) {
      return Status::InvalidArgument("Invalid non-frozen collection type '" + c.type.ToCql() +
                                     "' for PRIMARY KEY column '" + c.name + "'");
    }
    return Status::InvalidArgument("Invalid non-frozen user-defined type '" + c.type.ToCql() +
                                   "' for PRIMARY KEY column '" + c.name + "'");
  }
  if (c.type.kind() == TypeKind::kCounter) {
    return Status::InvalidArgument("counter type is not supported for PRIMARY KEY column '" + c.name + "'");
  }
  if (ReferencesDuration(c.type)) {
    return Status::InvalidArgument("duration type is not supported for PRIMARY KEY column '" + c.name + "'");
  }
  return Status::OK();
}

Result<TableSchema> BuildViewSchema(const CreateViewStatement& s, const TableSchema& base) {
  const std::string& name = s.view.name;
  if (!base.index_of.empty()) {
    return Status::InvalidArgument("Cannot create a materialized view on table " + base.name +
                                   ": it holds secondary index " + base.index_of);
  }
  if (base.options.gc_grace_seconds == 0) {
    return Status::InvalidArgument("Cannot create materialized view '" + name + "' for base table '" + base.name +
                                   "' with gc_grace_seconds of 0, since this value is used to TTL undelivered "
                                   "updates. Setting gc_grace_seconds too low might cause undelivered updates to "
                                   "expire before being replayed.");
  }
  // SELECT: the named columns, or all of them.
  std::vector<const ColumnDef*> selected;
  if (s.columns.empty()) {
    for (const ColumnDef& c : base.columns) selected.push_back(&c);
  }
  for (const std::string& c : s.columns) {
    const ColumnDef* def = base.FindColumn(c);
    if (!def) return Status::InvalidArgument("Undefined column name " + c + " in table " + base.keyspace + "." + base.name);
    if (std::find(selected.begin(), selected.end(), def) == selected.end()) selected.push_back(def);
  }
  auto is_selected = [&](const std::string& c) {
    return std::any_of(selected.begin(), selected.end(), [&](const ColumnDef* d) { return d->name == c; });
  };
  // PRIMARY KEY and CLUSTERING ORDER BY.
  std::set<std::string> key;
  std::vector<std::string> key_order = s.partition_key;
  key_order.insert(key_order.end(), s.clustering.begin(), s.clustering.end());
  for (const std::string& c : key_order) {
    const ColumnDef* def = base.FindColumn(c);
    if (!def || !is_selected(c)) {
      return Status::InvalidArgument("Unknown column '" + c + "' referenced in PRIMARY KEY for materialized view '" + name + "'");
    }
    if (!key.insert(c).second) {
      return Status::InvalidArgument("Duplicate column '" + c + "' in PRIMARY KEY clause for materialized view '" + name + "'");
    }
    TESSERA_RETURN_IF_ERROR(CheckKeyColumn(*def));
  }
  if (!s.clustering_order.empty()) {
    bool same = s.clustering_order.size() == s.clustering.size();
    for (size_t i = 0; same && i < s.clustering.size(); ++i) same = s.clustering_order[i].first == s.clustering[i];
    if (!same) return Status::InvalidArgument("Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive");
  }
  // WHERE: IS NOT NULL on every key column (and on any other, which the row filter already implies).
  for (const std::string& c : s.not_null) {
    if (!base.FindColumn(c)) return Status::InvalidArgument("Undefined column name " + c);
  }
  std::vector<std::string> unrestricted;
  for (const std::string& c : key_order) {
    if (std::find(s.not_null.begin(), s.not_null.end(), c) == s.not_null.end()) unrestricted.push_back(c);
  }
  if (!unrestricted.empty()) {
    return Status::InvalidArgument("Primary key columns " + Join(unrestricted) +
                                   " must be restricted with 'IS NOT NULL' or otherwise");
  }

  TableSchema t;
  t.keyspace = base.keyspace;
  t.name = name;
  auto add = [&](const ColumnDef& from, ColumnKind kind) {
    ColumnDef c;
    c.name = from.name;
    c.type = from.type;
    c.kind = kind;
    t.columns.push_back(std::move(c));
  };
  for (const std::string& c : s.partition_key) add(*base.FindColumn(c), ColumnKind::kPartitionKey);
  for (size_t i = 0; i < s.clustering.size(); ++i) {
    const ColumnDef& from = *base.FindColumn(s.clustering[i]);
    add(from, ColumnKind::kClustering);
    // As Cassandra: the base's order unless CLUSTERING ORDER BY says otherwise.
    t.columns.back().order = !s.clustering_order.empty() ? (s.clustering_order[i].second ? SortOrder::kDesc : SortOrder::kAsc)
                             : from.kind == ColumnKind::kClustering ? from.order
                                                                   : SortOrder::kAsc;
  }
  for (const ColumnDef* c : selected) {
    if (!key.count(c->name)) add(*c, ColumnKind::kRegular);
  }
  t.options.gc_grace_seconds = base.options.gc_grace_seconds;
  TESSERA_RETURN_IF_ERROR(ApplyCreateTableProperties(s.properties, &t));
  if (t.options.default_time_to_live != 0) {
    return Status::InvalidArgument("Cannot set default_time_to_live for a materialized view. Data in a materialized "
                                   "view always expire at the same time than the corresponding data in the parent table.");
  }
  if (t.distribution == Distribution::kRange) t.options.initial_tablets = 1;
  ViewDef view;
  view.base_table = base.name;
  view.include_all_columns = s.columns.empty();
  for (const std::string& c : s.not_null) {
    view.where_clause += (view.where_clause.empty() ? "" : " AND ") + QuoteIdentifier(c) + " IS NOT NULL";
  }
  t.view = std::move(view);
  t.uuid = DerivedUuid(base.uuid, "view/" + name);
  return t;
}

}  // namespace

Result<SchemaOutcome> ExecuteCreateView(Coordinator& coordinator, const CreateViewStatement& s,
                                        const std::string& current, bool build) {
  Database& db = coordinator.database();
  const std::string ks = KeyspaceOf(s.view, current);
  if (ks.empty()) return NoKeyspace();
  if (!s.base.keyspace.empty() && s.base.keyspace != ks) {
    return Status::InvalidArgument("Cannot create a materialized view on a table in a different keyspace");
  }
  if (!db.catalog().GetKeyspace(ks).ok()) return Status::InvalidArgument("Keyspace '" + ks + "' doesn't exist");
  auto base = db.GetTable(ks, s.base.name);
  if (!base.ok()) return Status::InvalidArgument("Base table '" + s.base.name + "' doesn't exist");
  if (auto existing = db.GetTable(ks, s.view.name); existing.ok()) {
    if (!(*existing)->is_view()) {
      return Status::InvalidArgument("Cannot create materialized view '" + s.view.name +
                                     "' - a table with the same name already exists");
    }
    if (s.if_not_exists) return SchemaOutcome{};
    return Status::AlreadyExists("Cannot add already existing materialized view '" + s.view.name + "' to keyspace '" + ks + "'");
  }
  TESSERA_ASSIGN_OR_RETURN(TableSchema view, BuildViewSchema(s, **base));
  auto created = coordinator.CreateView(std::move(view), build);
  if (!created.ok()) {
    const Status& st = created.status();
    return st.IsInvalidArgument() || st.IsNotFound() ? Status::InvalidArgument(st.message()) : st;
  }
  SchemaOutcome outcome{SchemaChange{"CREATED", "TABLE", ks, s.view.name}};
  outcome.table_uuid = (*created)->uuid;
  return outcome;
}

Result<SchemaOutcome> ExecuteDropView(Coordinator& coordinator, const DropStatement& s, const std::string& current) {
  Database& db = coordinator.database();
  const std::string ks = KeyspaceOf(s.name, current);
  if (ks.empty()) return NoKeyspace();
  auto view = db.GetTable(ks, s.name.name);
  if (!view.ok() || !(*view)->is_view()) {
    if (s.if_exists) return SchemaOutcome{};
    return Status::InvalidArgument("Materialized view '" + s.name.name + "' doesn't exist");
  }
  TESSERA_RETURN_IF_ERROR(coordinator.DropView(ks, s.name.name));
  return SchemaOutcome{SchemaChange{"DROPPED", "TABLE", ks, s.name.name}};
}

}  // namespace tessera::cql
