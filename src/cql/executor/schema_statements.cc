#include "cql/executor/schema_statements.h"

#include "types/speculative_retry.h"

#include <algorithm>
#include <optional>
#include <set>

#include "common/bytes.h"

namespace tessera::cql {

std::string KeyspaceOf(const QualifiedName& name, const std::string& current) {
  return name.keyspace.empty() ? current : name.keyspace;
}

Status NoKeyspace() {
  return Status::InvalidArgument(
      "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
}

namespace {

// The text of a constant property value.
Result<std::string> ConstantText(const Property& p) {
  switch (p.value.kind) {
    case Term::Kind::kString: case Term::Kind::kInteger: case Term::Kind::kFloat: case Term::Kind::kBoolean:
      return p.value.text;
    default:
      return Status::InvalidArgument("Invalid value for property '" + p.name + "'");
  }
}

// A map property as text pairs, e.g. replication = {'class': 'SimpleStrategy', 'replication_factor': 1}.
Result<std::map<std::string, std::string>> MapProperty(const Property& p) {
  if (p.value.kind != Term::Kind::kMap && !(p.value.kind == Term::Kind::kSet && p.value.elements.empty())) {
    return Status::InvalidArgument("Property '" + p.name + "' must be a map");
  }
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < p.value.map_values.size(); ++i) {
    out[p.value.elements[i].text] = p.value.map_values[i].text;
  }
  return out;
}

// An integer property; a 64-bit one without a range.
Result<int64_t> Int64Property(const Property& p) {
  if (p.value.kind != Term::Kind::kInteger) return Status::InvalidArgument("Property '" + p.name + "' must be an integer");
  try {
    return static_cast<int64_t>(std::stoll(p.value.text));
  } catch (...) {
    return Status::InvalidArgument("Property '" + p.name + "' is out of range");
  }
}

Result<int32_t> IntProperty(const Property& p, int64_t lo, int64_t hi) {
  TESSERA_ASSIGN_OR_RETURN(int64_t v, Int64Property(p));
  if (v < lo || v > hi) {
    return Status::InvalidArgument(p.name + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  return static_cast<int32_t>(v);
}

// The textual form of any property value, for properties Tessera keeps but does not interpret.
std::string PropertyText(const Term& t) {
  if (t.kind == Term::Kind::kMap) {
    std::string s = "{";
    for (size_t i = 0; i < t.map_values.size(); ++i) {
      s += (i ? ", '" : "'") + t.elements[i].text + "': '" + t.map_values[i].text + "'";
    }
    return s + "}";
  }
  return t.text;
}

// Count changes an ALTER TABLE ... WITH asks for, carried out by the database
// once the rest of the schema change is in.
struct LayoutChanges {
  std::optional<uint32_t> buckets;            // Database::ChangeBucketCount
  std::optional<uint32_t> partition_buckets;  // Database::ChangePartitionBuckets
};

// `N | 'auto'` of a count property with the given maximum: nullopt for 'auto'.
Result<std::optional<uint32_t>> CountOrAuto(const Property& p, uint32_t max) {
  if (p.value.kind == Term::Kind::kString && AsciiLower(p.value.text) == "auto") return std::optional<uint32_t>();
  if (p.value.kind != Term::Kind::kInteger) {
    return Status::InvalidArgument(p.name + " must be an integer between 1 and " + std::to_string(max) + ", or 'auto'");
  }
  TESSERA_ASSIGN_OR_RETURN(int32_t v, IntProperty(p, 1, static_cast<int32_t>(max)));
  return std::optional<uint32_t>(static_cast<uint32_t>(v));
}

// `buckets = N | 'auto'` (TableSchema::buckets). Creating: the layout. Altering a bucketed
// table: `automatic`, and the new count for Database::ChangeBucketCount.
Status ApplyBuckets(const Property& p, TableSchema* t, bool creating, LayoutChanges* changes) {
  TESSERA_ASSIGN_OR_RETURN(auto n, CountOrAuto(p, BucketLayout::kMaxBuckets));
  if (creating) {
    t->buckets.automatic = !n;
    t->buckets.versions = {BucketVersion{"", n.value_or(1)}};
    return Status::OK();
  }
  if (!t->buckets.enabled()) {
    return Status::InvalidArgument("buckets can only be changed on a table created WITH buckets (its stored keys hold no bucket)");
  }
  t->buckets.automatic = !n;
  if (n) changes->buckets = *n;
  return Status::OK();
}

// `partition_buckets = N | 'auto'` (TableSchema::partition_buckets), likewise: 'auto' starts
// every partition at 1; altering to N adds N to the table-wide history.
Status ApplyPartitionBuckets(const Property& p, TableSchema* t, bool creating, LayoutChanges* changes) {
  TESSERA_ASSIGN_OR_RETURN(auto n, CountOrAuto(p, PartitionBucketLayout::kMaxCount));
  if (creating) {
    t->partition_buckets.automatic = !n;
    t->partition_buckets.counts = {n.value_or(1)};
    return Status::OK();
  }
  if (!t->partition_buckets.enabled()) {
    return Status::InvalidArgument(
        "partition_buckets can only be changed on a table created WITH partition_buckets (its stored keys hold no "
        "sub-partition)");
  }
  t->partition_buckets.automatic = !n;
  if (n) changes->partition_buckets = *n;
  return Status::OK();
}

Status ApplyTableProperties(const std::vector<Property>& props, TableSchema* t, bool creating,
                            LayoutChanges* changes = nullptr) {
  LayoutChanges ignored;
  if (!changes) changes = &ignored;
  for (const auto& p : props) {
    if (p.name == "comment") {
      TESSERA_ASSIGN_OR_RETURN(t->options.comment, ConstantText(p));
    } else if (p.name == "default_time_to_live") {
      TESSERA_ASSIGN_OR_RETURN(t->options.default_time_to_live, IntProperty(p, 0, 630720000));
    } else if (p.name == "gc_grace_seconds") {
      TESSERA_ASSIGN_OR_RETURN(t->options.gc_grace_seconds, IntProperty(p, 0, INT32_MAX));
    } else if (p.name == "distribution") {
      if (!creating) return Status::InvalidArgument("distribution cannot be altered");
      TESSERA_ASSIGN_OR_RETURN(std::string d, ConstantText(p));
      TESSERA_ASSIGN_OR_RETURN(t->distribution, ParseDistribution(d));
    } else if (p.name == "initial_tablets") {
      if (!creating) return Status::InvalidArgument("initial_tablets cannot be altered");
      TESSERA_ASSIGN_OR_RETURN(int32_t n, IntProperty(p, 1, 65536));
      t->options.initial_tablets = static_cast<uint32_t>(n);
    } else if (p.name == "buckets") {
      TESSERA_RETURN_IF_ERROR(ApplyBuckets(p, t, creating, changes));
    } else if (p.name == "partition_buckets") {
      TESSERA_RETURN_IF_ERROR(ApplyPartitionBuckets(p, t, creating, changes));
    } else {
      const std::string text = PropertyText(p.value);
      // Interpreted by the cluster coordinator's reads: refused here when it does not parse, as Cassandra does.
      if (p.name == "speculative_retry") TESSERA_RETURN_IF_ERROR(ParseSpeculativeRetry(text).status());
      t->options.extra[p.name] = text;
    }
  }
  return Status::OK();
}

}  // namespace

Status ApplyCreateTableProperties(const std::vector<Property>& properties, TableSchema* table) {
  return ApplyTableProperties(properties, table, /*creating=*/true);
}

Result<KeyspaceMetadata> BuildKeyspace(const std::string& name, const std::vector<Property>& properties) {
  KeyspaceMetadata ks;
  ks.name = name;
  bool have_replication = false;
  for (const auto& p : properties) {
    if (p.name == "replication") {
      TESSERA_ASSIGN_OR_RETURN(ks.replication, MapProperty(p));
      have_replication = true;
    } else if (p.name == "durable_writes") {
      if (p.value.kind != Term::Kind::kBoolean) return Status::InvalidArgument("durable_writes must be a boolean");
      ks.durable_writes = p.value.text == "true";
    } else {
      return Status::SyntaxError("Unknown property '" + p.name + "'");
    }
  }
  if (!have_replication) return Status::InvalidArgument("Missing mandatory option 'replication'");
  std::string cls = ks.replication["class"];
  if (cls.rfind("org.apache.cassandra.locator.", 0) == 0) cls = cls.substr(29);
  if (cls != "SimpleStrategy" && cls != "NetworkTopologyStrategy") {
    return Status::InvalidArgument("Unable to find replication strategy class '" + ks.replication["class"] + "'");
  }
  if (cls == "SimpleStrategy" && !ks.replication.count("replication_factor")) {
    return Status::InvalidArgument("SimpleStrategy requires a replication_factor strategy option.");
  }
  ks.replication["class"] = "org.apache.cassandra.locator." + cls;
  return ks;
}

Result<CqlType> ParseColumnType(const std::string& text, const std::string& keyspace, const UserTypeLookup* user_types) {
  auto type = CqlType::Parse(text, user_types);
  if (type.ok()) return type;
  const std::string m = type.status().message();
  const size_t at = m.find("unknown type '");
  if (at == std::string::npos) return Status::InvalidArgument(m);
  std::string name = m.substr(at + 14, m.find('\'', at + 14) - at - 14);
  return Status::InvalidArgument("Unknown type " + (name.find('.') == std::string::npos ? keyspace + "." : "") + name);
}

Result<TableSchema> BuildTableSchema(const CreateTableStatement& s, const std::string& current_keyspace,
                                     const UserTypeLookup* user_types) {
  TableSchema t;
  t.keyspace = KeyspaceOf(s.table, current_keyspace);
  if (t.keyspace.empty()) return NoKeyspace();
  t.name = s.table.name;
  if (s.compact_storage) return Status::InvalidArgument("COMPACT STORAGE tables are not supported");
  size_t inline_keys = std::count_if(s.columns.begin(), s.columns.end(), [](const auto& c) { return c.primary_key; });
  if (inline_keys > 1 || (inline_keys == 1 && s.partition_key.size() > 1)) {
    return Status::InvalidArgument("Multiple PRIMARY KEYs specified (exactly one required)");
  }
  if (s.partition_key.empty()) return Status::InvalidArgument("No PRIMARY KEY specifed for table '" + t.name + "' (exactly one required)");
  std::map<std::string, const ColumnDeclaration*> declared;
  for (const auto& c : s.columns) {
    if (!declared.emplace(c.name, &c).second) return Status::InvalidArgument("Duplicate column '" + c.name + "' declaration for table " + t.keyspace + "." + t.name);
  }
  auto column = [&](const std::string& name, ColumnKind kind) -> Result<ColumnDef> {
    auto it = declared.find(name);
    if (it == declared.end()) return Status::InvalidArgument("Unknown definition " + name + " referenced in PRIMARY KEY");
    TESSERA_ASSIGN_OR_RETURN(CqlType type, ParseColumnType(it->second->type, t.keyspace, user_types));
    if (it->second->is_static && kind != ColumnKind::kStatic && kind != ColumnKind::kRegular) {
      return Status::InvalidArgument("Static column " + name + " cannot be part of the PRIMARY KEY");
    }
    const bool key = kind == ColumnKind::kPartitionKey || kind == ColumnKind::kClustering;
    if (key && type.kind() == TypeKind::kUdt && type.IsMultiCell()) {
      return Status::InvalidArgument("Invalid non-frozen user-defined type \"" + type.ToCql() + "\" for PRIMARY KEY component " + name);
    }
    ColumnDef def;
    def.name = name;
    def.type = std::move(type);
    def.kind = kind;
    return def;
  };
  std::set<std::string> used;
  for (const auto& name : s.partition_key) {
    TESSERA_ASSIGN_OR_RETURN(ColumnDef def, column(name, ColumnKind::kPartitionKey));
    if (!used.insert(name).second) return Status::InvalidArgument("Duplicate definition for " + name + " in PRIMARY KEY");
    t.columns.push_back(std::move(def));
  }
  for (size_t i = 0; i < s.clustering.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(ColumnDef def, column(s.clustering[i], ColumnKind::kClustering));
    if (!used.insert(s.clustering[i]).second) return Status::InvalidArgument("Duplicate definition for " + s.clustering[i] + " in PRIMARY KEY");
    t.columns.push_back(std::move(def));
  }
  // CLUSTERING ORDER BY must name the clustering columns, in order.
  for (size_t i = 0; i < s.clustering_order.size(); ++i) {
    const auto& [name, desc] = s.clustering_order[i];
    auto it = std::find(s.clustering.begin(), s.clustering.end(), name);
    if (it == s.clustering.end()) {
      return Status::InvalidArgument("Only clustering key columns can be defined in CLUSTERING ORDER directive");
    }
    if (static_cast<size_t>(it - s.clustering.begin()) != i) {
      return Status::InvalidArgument("The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns");
    }
    t.columns[s.partition_key.size() + i].order = desc ? SortOrder::kDesc : SortOrder::kAsc;
  }
  for (const auto& c : s.columns) {
    if (used.count(c.name)) continue;
    TESSERA_ASSIGN_OR_RETURN(ColumnDef def, column(c.name, c.is_static ? ColumnKind::kStatic : ColumnKind::kRegular));
    t.columns.push_back(std::move(def));
  }
  TESSERA_RETURN_IF_ERROR(ApplyTableProperties(s.properties, &t, /*creating=*/true));
  if (t.distribution == Distribution::kRange) t.options.initial_tablets = 1;
  return t;
}

Result<SchemaOutcome> ExecuteCreateKeyspace(Database& db, const CreateKeyspaceStatement& s) {
  TESSERA_ASSIGN_OR_RETURN(KeyspaceMetadata ks, BuildKeyspace(s.name, s.properties));
  Status st = db.CreateKeyspace(ks);
  if (st.IsAlreadyExists()) {
    if (s.if_not_exists) return SchemaOutcome{};
    return Status::AlreadyExists("Keyspace " + s.name + " already exists");
  }
  TESSERA_RETURN_IF_ERROR(st);
  return SchemaOutcome{SchemaChange{"CREATED", "KEYSPACE", s.name, ""}};
}

Result<SchemaOutcome> ExecuteAlterKeyspace(Database& db, const AlterKeyspaceStatement& s) {
  auto existing = db.catalog().GetKeyspace(s.name);
  if (!existing.ok()) return Status::InvalidArgument("Keyspace " + s.name + " doesn't exist");
  // Properties not given keep their values.
  std::vector<Property> props = s.properties;
  bool has_replication = false;
  for (const auto& p : props) has_replication |= p.name == "replication";
  KeyspaceMetadata ks = *existing;
  if (has_replication) {
    TESSERA_ASSIGN_OR_RETURN(ks, BuildKeyspace(s.name, props));
    bool durable_given = false;
    for (const auto& p : props) durable_given |= p.name == "durable_writes";
    if (!durable_given) ks.durable_writes = existing->durable_writes;
  } else {
    for (const auto& p : props) {
      if (p.name != "durable_writes") return Status::SyntaxError("Unknown property '" + p.name + "'");
      if (p.value.kind != Term::Kind::kBoolean) return Status::InvalidArgument("durable_writes must be a boolean");
      ks.durable_writes = p.value.text == "true";
    }
  }
  TESSERA_RETURN_IF_ERROR(db.AlterKeyspace(ks));
  return SchemaOutcome{SchemaChange{"UPDATED", "KEYSPACE", s.name, ""}};
}

Result<SchemaOutcome> ExecuteCreateTable(Database& db, const CreateTableStatement& s, const std::string& keyspace,
                                         const std::string& table_uuid) {
  const UserTypeLookup user_types = db.catalog().TypeLookup(KeyspaceOf(s.table, keyspace));
  TESSERA_ASSIGN_OR_RETURN(TableSchema t, BuildTableSchema(s, keyspace, &user_types));
  t.uuid = table_uuid;
  if (!db.catalog().GetKeyspace(t.keyspace).ok()) return Status::InvalidArgument("Keyspace " + t.keyspace + " doesn't exist");
  const std::string ks = t.keyspace, name = t.name;
  if (db.GetTable(ks, name).ok()) {
    if (s.if_not_exists) return SchemaOutcome{};
    return Status::AlreadyExists("Table " + ks + "." + name + " already exists");
  }
  auto created = db.CreateTable(std::move(t));
  if (!created.ok()) {
    const Status& st = created.status();
    return st.IsInvalidArgument() ? Status::InvalidArgument(st.message()) : st;
  }
  SchemaOutcome outcome{SchemaChange{"CREATED", "TABLE", ks, name}};
  outcome.table_uuid = (*created)->uuid;
  return outcome;
}

Result<SchemaOutcome> ExecuteAlterTable(Database& db, const AlterTableStatement& s, const std::string& current) {
  const std::string ks = KeyspaceOf(s.table, current);
  if (ks.empty()) return NoKeyspace();
  auto existing = db.GetTable(ks, s.table.name);
  if (!existing.ok()) return Status::InvalidArgument("Table " + ks + "." + s.table.name + " doesn't exist");
  TableSchema t = **existing;
  if (!t.index_of.empty()) {
    return Status::InvalidArgument("Cannot use ALTER TABLE on table " + t.name + ": it holds secondary index " + t.index_of);
  }
  if (s.materialized_view != t.is_view()) {  // Cassandra 4.1's words
    if (t.is_view()) {
      return Status::InvalidArgument("Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead");
    }
    return Status::InvalidArgument("Materialized view '" + s.table.name + "' doesn't exist");
  }
  if (t.is_view()) {
    for (const auto& p : s.properties) {
      if (p.name == "default_time_to_live") {
        return Status::InvalidArgument("Cannot set or alter default_time_to_live for a materialized view. Data in a "
                                       "materialized view always expire at the same time than the corresponding "
                                       "data in the parent table.");
      }
    }
  }
  if (s.op == AlterTableStatement::Op::kDrop && !t.views.empty()) {
    return Status::InvalidArgument("Cannot drop column " + (s.dropped.empty() ? std::string() : s.dropped.front()) +
                                   " on base table " + t.name + " with materialized views.");
  }
  LayoutChanges changes;
  switch (s.op) {
    case AlterTableStatement::Op::kAdd:
      for (const auto& c : s.added) {
        if (t.FindColumn(c.name)) return Status::InvalidArgument("Column with name '" + c.name + "' already exists");
        const UserTypeLookup user_types = db.catalog().TypeLookup(ks);
        TESSERA_ASSIGN_OR_RETURN(CqlType type, ParseColumnType(c.type, ks, &user_types));
        ColumnDef def;
        def.name = c.name;
        def.type = std::move(type);
        def.kind = c.is_static ? ColumnKind::kStatic : ColumnKind::kRegular;
        t.columns.push_back(std::move(def));
      }
      break;
    case AlterTableStatement::Op::kDrop:
      for (const auto& name : s.dropped) {
        const ColumnDef* c = t.FindColumn(name);
        if (!c) return Status::InvalidArgument("Column " + name + " was not found in table " + s.table.name);
        if (c->kind == ColumnKind::kPartitionKey || c->kind == ColumnKind::kClustering) {
          return Status::InvalidArgument("Cannot drop PRIMARY KEY part " + name);
        }
        std::string dependent;
        for (const IndexDef& i : t.indexes) {
          if (i.column_id == c->id) dependent += (dependent.empty() ? "" : ",") + i.name;
        }
        if (!dependent.empty()) {  // Cassandra 4.1's words
          return Status::InvalidArgument("Cannot drop column " + name + " because it has dependent secondary indexes (" +
                                         dependent + ")");
        }
        std::erase_if(t.columns, [&](const ColumnDef& d) { return d.name == name; });
      }
      break;
    case AlterTableStatement::Op::kRename:
      return Status::InvalidArgument("Renaming columns is not supported yet");
    case AlterTableStatement::Op::kWith:
      TESSERA_RETURN_IF_ERROR(ApplyTableProperties(s.properties, &t, /*creating=*/false, &changes));
      break;
    case AlterTableStatement::Op::kAlterType:
      return Status::InvalidArgument("Altering column types is not supported");
  }
  auto altered = db.AlterTable(std::move(t));
  if (!altered.ok()) return Status::InvalidArgument(altered.status().message());
  if (s.op == AlterTableStatement::Op::kAdd) {  // views of SELECT * get the new columns too, as in Cassandra
    for (const std::string& name : (*altered)->views) {
      auto view = db.GetTable(ks, name);
      if (!view.ok() || !(*view)->view || !(*view)->view->include_all_columns) continue;
      TableSchema v = **view;
      for (const auto& c : s.added) {
        const ColumnDef* added = (*altered)->FindColumn(c.name);
        if (!added || added->kind == ColumnKind::kStatic || v.FindColumn(c.name)) continue;
        ColumnDef def = *added;
        def.id = 0;
        v.columns.push_back(std::move(def));
      }
      TESSERA_RETURN_IF_ERROR(db.AlterTable(std::move(v)).status());
    }
  }
  if (changes.buckets) {
    auto changed = db.ChangeBucketCount(**altered, *changes.buckets, "ALTER TABLE");
    if (!changed.ok()) return changed.status();
  }
  if (changes.partition_buckets) {
    auto changed = db.ChangePartitionBuckets(**altered, std::nullopt, *changes.partition_buckets, "ALTER TABLE");
    if (!changed.ok()) return changed.status();
  }
  return SchemaOutcome{SchemaChange{"UPDATED", "TABLE", ks, s.table.name}};
}

Status ExecuteCreateSequence(Database& db, const CreateSequenceStatement& s, const std::string& current) {
  const std::string ks = KeyspaceOf(s.name, current);
  if (ks.empty()) return NoKeyspace();
  if (!db.catalog().GetKeyspace(ks).ok()) return Status::InvalidArgument("Keyspace " + ks + " doesn't exist");
  SequenceOptions options;
  for (const auto& p : s.properties) {
    if (p.name == "kind" || p.name == "sequence_kind") {
      TESSERA_ASSIGN_OR_RETURN(options.kind, ConstantText(p));
    } else if (p.name == "skip_range_min") {
      TESSERA_ASSIGN_OR_RETURN(options.skip_range_min, Int64Property(p));
    } else if (p.name == "skip_range_max") {
      TESSERA_ASSIGN_OR_RETURN(options.skip_range_max, Int64Property(p));
    } else if (p.name == "start_with_counter") {
      TESSERA_ASSIGN_OR_RETURN(options.start_with_counter, Int64Property(p));
    } else {
      return Status::SyntaxError("Unknown property '" + p.name + "'");
    }
  }
  Status st = db.sequences().Create(ks, s.name.name, options, s.if_not_exists);
  return st.IsAlreadyExists() ? Status::InvalidArgument(st.message()) : st;
}

Result<SchemaOutcome> ExecuteDrop(Database& db, const DropStatement& s, const std::string& current) {
  if (s.target == DropStatement::Target::kSequence) {
    const std::string ks = KeyspaceOf(s.name, current);
    if (ks.empty()) return NoKeyspace();
    Status st = db.sequences().Drop(ks, s.name.name, s.if_exists);
    if (st.IsNotFound()) return Status::InvalidArgument(st.message());
    TESSERA_RETURN_IF_ERROR(st);
    return SchemaOutcome{};
  }
  if (s.target == DropStatement::Target::kKeyspace) {
    Status st = db.DropKeyspace(s.name.name);
    if (st.IsNotFound()) {
      if (s.if_exists) return SchemaOutcome{};
      return Status::InvalidArgument("Cannot drop non existing keyspace '" + s.name.name + "'.");
    }
    TESSERA_RETURN_IF_ERROR(st);
    return SchemaOutcome{SchemaChange{"DROPPED", "KEYSPACE", s.name.name, ""}};
  }
  const std::string ks = KeyspaceOf(s.name, current);
  if (ks.empty()) return NoKeyspace();
  if (auto t = db.GetTable(ks, s.name.name); t.ok() && !(*t)->index_of.empty()) {
    return Status::InvalidArgument("Cannot use DROP TABLE on table " + s.name.name + ": it holds secondary index " +
                                   (*t)->index_of + " (use DROP INDEX)");
  }
  if (auto t = db.GetTable(ks, s.name.name); t.ok()) {  // Cassandra 4.1's words
    if ((*t)->is_view()) {
      return Status::InvalidArgument("Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead.");
    }
    if (!(*t)->views.empty()) {
      std::string names;
      for (const auto& v : (*t)->views) names += (names.empty() ? "" : ", ") + v;
      return Status::InvalidArgument("Cannot drop table when materialized views still depend on it (" + ks + ".{" + names + "})");
    }
  }
  Status st = db.DropTable(ks, s.name.name);
  if (st.IsNotFound()) {
    if (s.if_exists) return SchemaOutcome{};
    return Status::InvalidArgument("Table '" + ks + "." + s.name.name + "' doesn't exist");
  }
  TESSERA_RETURN_IF_ERROR(st);
  return SchemaOutcome{SchemaChange{"DROPPED", "TABLE", ks, s.name.name}};
}

Status ExecuteTruncate(Coordinator& coordinator, const TruncateStatement& s, const std::string& current) {
  const std::string ks = KeyspaceOf(s.table, current);
  if (ks.empty()) return NoKeyspace();
  Status st = coordinator.TruncateTable(ks, s.table.name);
  if (st.IsNotFound()) return Status::InvalidArgument("unconfigured table " + s.table.name);
  return st;
}

}  // namespace tessera::cql
