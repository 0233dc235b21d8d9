#include "cql/executor/system_tables.h"

#include <algorithm>

#include "common/bytes.h"
#include "common/uuid.h"
#include "cql/executor/virtual_row_builder.h"
#include "keys/murmur3.h"
#include "types/schema_json.h"
#include "types/serialization.h"
#include "types/value_literal.h"

namespace tessera::cql {
namespace {

// Tessera's own table options, where a driver keeps what it does not interpret (text values
// as blobs): distribution, initial_tablets, and the current buckets / partition_buckets
// ('auto' or the count new writes use), so that DESCRIBE recreates them.
Value Extensions(const TableSchema& t) {
  std::vector<std::pair<Value, Value>> entries{
      {Value::Bytes("tessera.distribution"), Value::Bytes(t.distribution == Distribution::kRange ? "range" : "hash")},
      {Value::Bytes("tessera.initial_tablets"), Value::Bytes(std::to_string(t.options.initial_tablets))}};
  if (t.buckets.enabled()) {
    entries.emplace_back(Value::Bytes("tessera.buckets"),
                         Value::Bytes(t.buckets.automatic ? "auto" : std::to_string(t.buckets.current_count())));
  }
  if (t.partition_buckets.enabled()) {
    entries.emplace_back(Value::Bytes("tessera.partition_buckets"),
                         Value::Bytes(t.partition_buckets.automatic ? "auto"
                                                                    : std::to_string(t.partition_buckets.counts.back())));
  }
  return Value::Map(std::move(entries));
}

struct Col {
  const char* name;
  const char* type;
  ColumnKind kind;
};

constexpr ColumnKind PK = ColumnKind::kPartitionKey, CK = ColumnKind::kClustering, R = ColumnKind::kRegular;

// A name-based (version 3 layout) uuid from the 128-bit Murmur3 of `seed`.
std::string NameBasedUuid(std::string_view seed) {
  auto h = CassandraMurmur3(seed);
  std::string u;
  for (int i = 0; i < 8; ++i) u.push_back(static_cast<char>(static_cast<uint64_t>(h.h1) >> (8 * i)));
  for (int i = 0; i < 8; ++i) u.push_back(static_cast<char>(static_cast<uint64_t>(h.h2) >> (8 * i)));
  u[6] = static_cast<char>((u[6] & 0x0F) | 0x30);
  u[8] = static_cast<char>((u[8] & 0x3F) | 0x80);
  return u;
}

std::shared_ptr<const TableSchema> Make(const char* ks, const char* name, std::initializer_list<Col> cols) {
  auto t = std::make_shared<TableSchema>();
  t->keyspace = ks;
  t->name = name;
  t->uuid = NameBasedUuid(std::string(ks) + "." + name);  // the same on every node and every start
  uint32_t id = 0;
  for (const auto& c : cols) t->columns.push_back({id++, c.name, *CqlType::Parse(c.type), c.kind, SortOrder::kAsc});
  return t;
}

const char* KindName(ColumnKind k) {
  switch (k) {
    case ColumnKind::kPartitionKey: return "partition_key";
    case ColumnKind::kClustering: return "clustering";
    case ColumnKind::kStatic: return "static";
    default: return "regular";
  }
}

}  // namespace

SystemTables::SystemTables(Coordinator* coordinator, NodeInfo node)
    : coordinator_(coordinator), db_(&coordinator->database()), node_(std::move(node)) {
  if (node_.host_id.size() != 16) node_.host_id = RandomUuidV4();
  auto add = [&](std::shared_ptr<const TableSchema> t) { tables_[{t->keyspace, t->name}] = std::move(t); };
  add(Make("system", "local",
           {{"key", "text", PK}, {"bootstrapped", "text", R}, {"broadcast_address", "inet", R},
            {"broadcast_port", "int", R}, {"cluster_name", "text", R}, {"cql_version", "text", R},
            {"data_center", "text", R}, {"gossip_generation", "int", R}, {"host_id", "uuid", R},
            {"listen_address", "inet", R}, {"listen_port", "int", R}, {"native_protocol_version", "text", R},
            {"partitioner", "text", R}, {"rack", "text", R}, {"release_version", "text", R},
            {"rpc_address", "inet", R}, {"rpc_port", "int", R}, {"schema_version", "uuid", R},
            {"tokens", "set<text>", R}, {"truncated_at", "map<uuid, blob>", R}}));
  add(Make("system", "peers",
           {{"peer", "inet", PK}, {"data_center", "text", R}, {"host_id", "uuid", R}, {"preferred_ip", "inet", R},
            {"rack", "text", R}, {"release_version", "text", R}, {"rpc_address", "inet", R},
            {"schema_version", "uuid", R}, {"tokens", "set<text>", R}}));
  add(Make("system", "peers_v2",
           {{"peer", "inet", PK}, {"peer_port", "int", CK}, {"data_center", "text", R}, {"host_id", "uuid", R},
            {"native_address", "inet", R}, {"native_port", "int", R}, {"preferred_ip", "inet", R},
            {"preferred_port", "int", R}, {"rack", "text", R}, {"release_version", "text", R},
            {"schema_version", "uuid", R}, {"tokens", "set<text>", R}}));
  add(Make("system_views", "settings", {{"name", "text", PK}, {"value", "text", R}}));
  add(Make("system_schema", "keyspaces",
           {{"keyspace_name", "text", PK}, {"durable_writes", "boolean", R},
            {"replication", "frozen<map<text, text>>", R}}));
  add(Make("system_schema", "tables",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK},
            {"additional_write_policy", "text", R}, {"bloom_filter_fp_chance", "double", R},
            {"caching", "frozen<map<text, text>>", R}, {"cdc", "boolean", R}, {"comment", "text", R},
            {"compaction", "frozen<map<text, text>>", R}, {"compression", "frozen<map<text, text>>", R},
            {"crc_check_chance", "double", R}, {"default_time_to_live", "int", R},
            {"extensions", "frozen<map<text, blob>>", R}, {"flags", "frozen<set<text>>", R},
            {"gc_grace_seconds", "int", R}, {"id", "uuid", R}, {"max_index_interval", "int", R},
            {"memtable", "text", R}, {"memtable_flush_period_in_ms", "int", R}, {"min_index_interval", "int", R},
            {"read_repair", "text", R}, {"speculative_retry", "text", R}}));
  add(Make("system_schema", "dropped_columns",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"column_name", "text", CK},
            {"dropped_time", "timestamp", R}, {"kind", "text", R}, {"type", "text", R}}));
  add(Make("system_schema", "columns",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"column_name", "text", CK},
            {"clustering_order", "text", R}, {"column_name_bytes", "blob", R}, {"kind", "text", R},
            {"position", "int", R}, {"type", "text", R}}));
  add(Make("system_schema", "types",
           {{"keyspace_name", "text", PK}, {"type_name", "text", CK}, {"field_names", "frozen<list<text>>", R},
            {"field_types", "frozen<list<text>>", R}}));
  add(Make("system_schema", "functions",
           {{"keyspace_name", "text", PK}, {"function_name", "text", CK}, {"argument_types", "frozen<list<text>>", CK},
            {"argument_names", "frozen<list<text>>", R}, {"body", "text", R}, {"called_on_null_input", "boolean", R},
            {"language", "text", R}, {"return_type", "text", R}}));
  add(Make("system_schema", "aggregates",
           {{"keyspace_name", "text", PK}, {"aggregate_name", "text", CK}, {"argument_types", "frozen<list<text>>", CK},
            {"final_func", "text", R}, {"initcond", "text", R}, {"return_type", "text", R}, {"state_func", "text", R},
            {"state_type", "text", R}}));
  add(Make("system_schema", "triggers",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"trigger_name", "text", CK},
            {"options", "frozen<map<text, text>>", R}}));
  add(Make("system_schema", "indexes",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"index_name", "text", CK},
            {"kind", "text", R}, {"options", "frozen<map<text, text>>", R}}));
  add(Make("system_schema", "views",
           {{"keyspace_name", "text", PK}, {"view_name", "text", CK}, {"additional_write_policy", "text", R},
            {"base_table_id", "uuid", R}, {"base_table_name", "text", R}, {"bloom_filter_fp_chance", "double", R},
            {"caching", "frozen<map<text, text>>", R}, {"cdc", "boolean", R}, {"comment", "text", R},
            {"compaction", "frozen<map<text, text>>", R}, {"compression", "frozen<map<text, text>>", R},
            {"crc_check_chance", "double", R}, {"dclocal_read_repair_chance", "double", R},
            {"default_time_to_live", "int", R},
            {"extensions", "frozen<map<text, blob>>", R}, {"gc_grace_seconds", "int", R}, {"id", "uuid", R},
            {"include_all_columns", "boolean", R}, {"max_index_interval", "int", R}, {"memtable", "text", R},
            {"memtable_flush_period_in_ms", "int", R}, {"min_index_interval", "int", R}, {"read_repair", "text", R},
            {"read_repair_chance", "double", R}, {"speculative_retry", "text", R}, {"where_clause", "text", R}}));
  // Cassandra's system.paxos (4.0 columns): this node's Paxos state per
  // partition (cluster/paxos_state.h); versions are the row format's (1).
  add(Make("system", "paxos",
           {{"row_key", "blob", PK}, {"cf_id", "uuid", CK}, {"in_progress_ballot", "timeuuid", R},
            {"most_recent_commit", "blob", R}, {"most_recent_commit_at", "timeuuid", R},
            {"most_recent_commit_version", "int", R}, {"proposal", "blob", R}, {"proposal_ballot", "timeuuid", R},
            {"proposal_version", "int", R}}));
  add(Make("system", "tablets",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"tablet_id", "bigint", CK},
            {"start_key", "text", R}, {"end_key", "text", R}, {"size_bytes", "bigint", R}, {"rows_estimate", "bigint", R},
            {"reads", "bigint", R}, {"writes", "bigint", R}, {"bytes_read", "bigint", R}, {"bytes_written", "bigint", R},
            {"reads_per_second", "double", R}, {"writes_per_second", "double", R}, {"state", "text", R},
            {"replicas", "frozen<list<uuid>>", R}, {"replica_reads_per_second", "double", R},
            {"replica_writes_per_second", "double", R}}));
  // Cassandra's view build progress: views this node has built, and builds
  // running (with the base partitions written so far; Cassandra splits its
  // progress by token range, a build here is one scan).
  add(Make("system", "built_views",
           {{"keyspace_name", "text", PK}, {"view_name", "text", CK}, {"status_replicated", "boolean", R}}));
  add(Make("system", "view_builds_in_progress",
           {{"keyspace_name", "text", PK}, {"view_name", "text", CK}, {"keys_built", "bigint", R}}));
  add(Make("system", "tablet_events",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"seq", "int", CK}, {"at", "timestamp", R},
            {"kind", "text", R}, {"from_tablets", "frozen<list<bigint>>", R}, {"to_tablets", "frozen<list<bigint>>", R},
            {"reason", "text", R}}));
  add(Make("system", "hot_partitions",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"kind", "text", CK}, {"rank", "int", CK},
            {"partition_key", "text", R}, {"count", "bigint", R}, {"error", "bigint", R}, {"share", "double", R}}));
  add(Make("system", "large_partitions",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"partition_key", "text", CK},
            {"rows", "bigint", R}, {"size_bytes", "bigint", R}, {"measured_at", "timestamp", R}, {"state", "text", R}}));
  add(Make("system", "key_advice",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"kind", "text", CK}, {"subject", "text", CK},
            {"score", "double", R}, {"evidence", "text", R}, {"advice", "text", R}}));
  add(Make("system_traces", "sessions",
           {{"session_id", "uuid", PK}, {"client", "inet", R}, {"command", "text", R}, {"coordinator", "inet", R},
            {"coordinator_port", "int", R}, {"duration", "int", R}, {"parameters", "map<text, text>", R},
            {"request", "text", R}, {"started_at", "timestamp", R}}));
  add(Make("system_traces", "events",
           {{"session_id", "uuid", PK}, {"event_id", "timeuuid", CK}, {"activity", "text", R}, {"source", "inet", R},
            {"source_elapsed", "int", R}, {"source_port", "int", R}, {"thread", "text", R}}));
  add(Make("system_virtual_schema", "keyspaces", {{"keyspace_name", "text", PK}}));
  add(Make("system_virtual_schema", "tables",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"comment", "text", R}}));
  add(Make("system_virtual_schema", "columns",
           {{"keyspace_name", "text", PK}, {"table_name", "text", CK}, {"column_name", "text", CK},
            {"clustering_order", "text", R}, {"column_name_bytes", "blob", R}, {"kind", "text", R},
            {"position", "int", R}, {"type", "text", R}}));
}

std::shared_ptr<const TableSchema> SystemTables::Find(const std::string& ks, const std::string& table) const {
  auto it = tables_.find({ks, table});
  return it == tables_.end() ? nullptr : it->second;
}

std::string SystemTables::SchemaVersion() const {
  const auto& catalog = db_->catalog();
  const uint64_t at = catalog.version();
  {
    std::lock_guard<std::mutex> lock(version_mu_);
    if (version_of_ == at) return version_;
  }
  std::string seed;
  for (const auto& ks : catalog.Keyspaces()) {
    // system_auth is each node's own (a cluster keeps auth in etcd): were it
    // hashed, nodes made at different times would never agree on a version.
    if (ks.name == "system_auth") continue;
    seed += KeyspaceToJson(ks);
    for (const auto& table : catalog.Tables(ks.name)) seed += TableToJson(*table);
    for (const auto& type : catalog.Types(ks.name)) seed += UserTypeToJson(type);
  }
  std::string u = NameBasedUuid(seed);
  // Kept only if no DDL ran meanwhile (else the next call hashes again).
  if (catalog.version() == at) {
    std::lock_guard<std::mutex> lock(version_mu_);
    version_of_ = at;
    version_ = u;
  }
  return u;
}

namespace {

// A set<text> of decimal tokens, as Cassandra's Murmur3Partitioner writes them.
Value TokenSet(const std::vector<int64_t>& tokens) {
  std::vector<Value> items;
  for (int64_t t : tokens) items.push_back(Value::Bytes(std::to_string(t)));
  return Value::List(std::move(items));
}

}  // namespace

std::vector<KeyspaceMetadata> SystemTables::SchemaKeyspaces() const {
  std::vector<KeyspaceMetadata> keyspaces = db_->catalog().Keyspaces();
  // Cassandra's replication of its own keyspaces (system and system_schema are node-local).
  const std::pair<const char*, std::map<std::string, std::string>> system[] = {
      {"system", {{"class", "org.apache.cassandra.locator.LocalStrategy"}}},
      {"system_auth", {{"class", "org.apache.cassandra.locator.SimpleStrategy"}, {"replication_factor", "1"}}},
      {"system_distributed", {{"class", "org.apache.cassandra.locator.SimpleStrategy"}, {"replication_factor", "3"}}},
      {"system_schema", {{"class", "org.apache.cassandra.locator.LocalStrategy"}}},
      {"system_traces", {{"class", "org.apache.cassandra.locator.SimpleStrategy"}, {"replication_factor", "2"}}}};
  for (const auto& entry : system) {
    const std::string name = entry.first;
    if (std::any_of(keyspaces.begin(), keyspaces.end(), [&](const KeyspaceMetadata& k) { return k.name == name; })) {
      continue;  // the catalog holds it (system_auth on a node with authentication)
    }
    KeyspaceMetadata ks;
    ks.name = name;
    ks.durable_writes = true;
    ks.replication = entry.second;
    keyspaces.push_back(std::move(ks));
  }
  return keyspaces;
}

std::vector<std::shared_ptr<const TableSchema>> SystemTables::SchemaTables(const std::string& keyspace) const {
  std::vector<std::shared_ptr<const TableSchema>> tables = db_->catalog().Tables(keyspace);
  // The virtual ones Tessera answers itself; system_views and system_virtual_schema are virtual
  // keyspaces, which Cassandra lists in system_virtual_schema instead.
  if (keyspace == "system" || keyspace == "system_schema" || keyspace == "system_traces") {
    for (const auto& [name, table] : tables_) {
      if (name.first == keyspace) tables.push_back(table);
    }
  }
  return tables;
}

std::vector<int64_t> SystemTables::LocalTokens() const {
  std::vector<int64_t> tokens;
  if (node_.cluster != nullptr) tokens = node_.cluster->LocalTokens();
  if (tokens.empty()) tokens.push_back(node_.token);
  return tokens;
}

std::vector<SourceRow> SystemTables::PeerRows(const TableSchema& t) const {
  std::vector<SourceRow> rows;
  if (node_.cluster == nullptr) return rows;
  for (const PeerInfo& p : node_.cluster->Peers()) {
    RowBuilder b(t);
    const Value address = InetValue(p.address);
    b.Set("peer", address).Text("data_center", p.data_center).Set("host_id", Value::Bytes(p.host_id))
        .Set("preferred_ip", address).Text("rack", p.rack).Text("release_version", p.release_version)
        .Set("tokens", TokenSet(p.tokens));
    if (p.schema_version.size() == 16) b.Set("schema_version", Value::Bytes(p.schema_version));
    if (t.name == "peers") {
      b.Set("rpc_address", address);
    } else {
      b.Int("peer_port", 7000).Set("native_address", address).Int("native_port", p.cql_port).Int("preferred_port", 7000);
    }
    rows.push_back(b.Take());
  }
  return rows;
}

Result<std::vector<SourceRow>> SystemTables::Rows(const TableSchema& t) const {
  std::vector<SourceRow> rows;
  const auto& catalog = db_->catalog();
  if (t.keyspace == "system" && t.name == "local") {
    RowBuilder b(t);
    b.Text("key", "local").Text("bootstrapped", "COMPLETED").Set("broadcast_address", InetValue(node_.rpc_address))
        .Int("broadcast_port", 7000).Text("cluster_name", node_.cluster_name).Text("cql_version", "3.4.5")
        .Text("data_center", node_.data_center).Int("gossip_generation", 1).Set("host_id", Value::Bytes(node_.host_id))
        .Set("listen_address", InetValue(node_.rpc_address)).Int("listen_port", 7000)
        .Text("native_protocol_version", "4").Text("partitioner", "org.apache.cassandra.dht.Murmur3Partitioner")
        .Text("rack", node_.rack).Text("release_version", "4.0.11")
        .Set("rpc_address", InetValue(node_.rpc_address)).Int("rpc_port", node_.rpc_port)
        .Set("schema_version", Value::Bytes(SchemaVersion()))
        .Set("tokens", TokenSet(LocalTokens()));
    rows.push_back(b.Take());
    return rows;
  }
  if (t.keyspace == "system" && (t.name == "peers" || t.name == "peers_v2")) return PeerRows(t);
  if (t.keyspace == "system" && t.name == "paxos") {
    if (node_.cluster == nullptr) return rows;
    for (const PaxosRowInfo& p : node_.cluster->PaxosRows()) {
      RowBuilder b(t);
      b.Set("row_key", Value::Bytes(p.partition)).Set("cf_id", Value::Bytes(p.table_uuid));
      if (!p.promised.empty()) b.Set("in_progress_ballot", Value::Bytes(p.promised));
      if (!p.committed_ballot.empty()) {
        b.Set("most_recent_commit", Value::Bytes(p.committed_update))
            .Set("most_recent_commit_at", Value::Bytes(p.committed_ballot)).Int("most_recent_commit_version", 1);
      }
      if (!p.accepted_ballot.empty()) {
        b.Set("proposal", Value::Bytes(p.accepted_update)).Set("proposal_ballot", Value::Bytes(p.accepted_ballot))
            .Int("proposal_version", 1);
      }
      rows.push_back(b.Take());
    }
    return rows;
  }
  if (t.keyspace == "system_views" && t.name == "settings") {
    for (const auto& [name, value] : node_.settings) {
      RowBuilder b(t);
      b.Text("name", name).Text("value", value);
      rows.push_back(b.Take());
    }
    return rows;
  }
  if (t.keyspace == "system" && (t.name == "tablets" || t.name == "tablet_events" || t.name == "hot_partitions" ||
                                 t.name == "large_partitions" || t.name == "key_advice")) {
    return TabletRows(t);
  }
  if (t.keyspace == "system" && (t.name == "built_views" || t.name == "view_builds_in_progress")) {
    for (const auto& ks : catalog.Keyspaces()) {
      for (const auto& table : catalog.Tables(ks.name)) {
        if (!table->is_view()) continue;
        const Coordinator::ViewBuildState state = coordinator_->ViewBuild(ks.name, table->name);
        if (state.built != (t.name == "built_views")) continue;
        RowBuilder b(t);
        b.Text("keyspace_name", ks.name).Text("view_name", table->name)
            .Set("status_replicated", Value::Boolean(false))
            .Set("keys_built", Value::Int(static_cast<int64_t>(state.keys_built)));
        rows.push_back(b.Take());
      }
    }
    return rows;
  }
  if (t.keyspace == "system_traces") return TraceRows(t, nullptr);
  if (t.keyspace != "system_schema") return rows;  // the virtual schema: empty
  if (t.name == "keyspaces") {
    for (const auto& ks : SchemaKeyspaces()) {
      RowBuilder b(t);
      b.Text("keyspace_name", ks.name).Set("durable_writes", Value::Boolean(ks.durable_writes))
          .Set("replication", StringMapValue(ks.replication));
      rows.push_back(b.Take());
    }
  } else if (t.name == "types") {
    for (const auto& ks : catalog.Keyspaces()) {
      for (const auto& type : catalog.Types(ks.name)) {
        std::vector<Value> names, types;
        for (size_t i = 0; i < type.params().size(); ++i) {
          names.push_back(Value::Bytes(type.field_names()[i]));
          types.push_back(Value::Bytes(type.params()[i].ToCql()));
        }
        RowBuilder b(t);
        b.Text("keyspace_name", ks.name).Text("type_name", type.udt_name()).Set("field_names", Value::List(names))
            .Set("field_types", Value::List(types));
        rows.push_back(b.Take());
      }
    }
  } else if (t.name == "functions") {
    auto texts = [](const std::vector<CqlType>& types) {
      std::vector<Value> out;
      for (const auto& type : types) out.push_back(Value::Bytes(type.ToCql()));
      return Value::List(std::move(out));
    };
    for (const auto& ks : catalog.Keyspaces()) {
      for (const UserFunction& f : catalog.Functions(ks.name)) {
        std::vector<Value> names;
        for (const auto& n : f.argument_names) names.push_back(Value::Bytes(n));
        RowBuilder b(t);
        b.Text("keyspace_name", ks.name).Text("function_name", f.name).Set("argument_types", texts(f.argument_types))
            .Set("argument_names", Value::List(names)).Text("body", f.body)
            .Set("called_on_null_input", Value::Boolean(f.called_on_null_input)).Text("language", f.language)
            .Text("return_type", f.return_type.ToCql());
        rows.push_back(b.Take());
      }
    }
  } else if (t.name == "aggregates") {
    for (const auto& ks : catalog.Keyspaces()) {
      for (const UserAggregate& a : catalog.Aggregates(ks.name)) {
        std::vector<Value> types;
        for (const auto& type : a.argument_types) types.push_back(Value::Bytes(type.ToCql()));
        RowBuilder b(t);
        b.Text("keyspace_name", ks.name).Text("aggregate_name", a.name).Set("argument_types", Value::List(types))
            .Text("state_func", a.state_function).Text("state_type", a.state_type.ToCql())
            .Text("return_type", a.return_type.ToCql());
        if (!a.final_function.empty()) b.Text("final_func", a.final_function);
        if (a.initial_state) b.Text("initcond", a.initial_condition_literal);
        rows.push_back(b.Take());
      }
    }
  } else if (t.name == "indexes") {
    for (const auto& ks : catalog.Keyspaces()) {
      for (const auto& table : catalog.Tables(ks.name)) {
        std::vector<IndexDef> indexes = table->indexes;
        std::sort(indexes.begin(), indexes.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
        for (const IndexDef& index : indexes) {
          const ColumnDef* c = table->FindColumnById(index.column_id);
          if (!c) continue;
          RowBuilder b(t);
          std::map<std::string, std::string> options{{"target", IndexTargetText(index, c->name, c->type.IsMultiCell())}};
          if (index.is_vector()) {  // Cassandra 5.0: a CUSTOM index naming its class and options
            options["class_name"] = index.class_name;
            options["similarity_function"] = SimilarityName(index.similarity);
          }
          b.Text("keyspace_name", ks.name).Text("table_name", table->name).Text("index_name", index.name)
              .Text("kind", index.is_vector() ? "CUSTOM" : "COMPOSITES")
              .Set("options", StringMapValue(options));
          rows.push_back(b.Take());
        }
      }
    }
  } else if (t.name == "tables" || t.name == "views" || t.name == "columns") {
    for (const auto& ks : SchemaKeyspaces()) {
      for (const auto& table : SchemaTables(ks.name)) {
        if (!table->index_of.empty()) continue;  // a secondary index's entries: internal
        if (t.name != "columns") {
          // Views are listed in views (with what they are a view of), the rest in tables.
          if ((t.name == "views") != table->is_view()) continue;
          RowBuilder b(t);
          std::map<std::string, std::string> compaction{{"class", "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy"}};
          b.Text("keyspace_name", ks.name).Text("table_name", table->name).Text("view_name", table->name)
              .Text("comment", table->options.comment)
              .Int("default_time_to_live", table->options.default_time_to_live)
              .Int("gc_grace_seconds", table->options.gc_grace_seconds).Set("id", Value::Bytes(table->uuid))
              .Set("flags", Value::List({Value::Bytes("compound")})).Set("bloom_filter_fp_chance", Value::Double(0.01))
              .Set("caching", StringMapValue({{"keys", "ALL"}, {"rows_per_partition", "NONE"}}))
              .Set("compaction", StringMapValue(compaction))
              .Set("compression", StringMapValue({{"chunk_length_in_kb", "16"}, {"class", "org.apache.cassandra.io.compress.LZ4Compressor"}}))
              .Set("crc_check_chance", Value::Double(1.0)).Set("cdc", Value::Boolean(false))
              // Tessera's own table options, where a driver keeps what it does not interpret.
              .Set("extensions", Extensions(*table))
              .Int("max_index_interval", 2048).Int("min_index_interval", 128)
              .Int("memtable_flush_period_in_ms", 0).Text("speculative_retry", "99p").Text("read_repair", "BLOCKING")
              .Text("additional_write_policy", "99p");
          if (table->view) {
            b.Set("base_table_id", Value::Bytes(table->view->base_uuid)).Text("base_table_name", table->view->base_table)
                .Set("include_all_columns", Value::Boolean(table->view->include_all_columns))
                .Text("where_clause", table->view->where_clause).Set("dclocal_read_repair_chance", Value::Double(0))
                .Set("read_repair_chance", Value::Double(0));
          }
          rows.push_back(b.Take());
          continue;
        }
        int clustering_position = 0, pk_position = 0;
        std::vector<SourceRow> cols;
        for (const auto& c : table->columns) {
          int position = -1;
          if (c.kind == ColumnKind::kPartitionKey) position = pk_position++;
          if (c.kind == ColumnKind::kClustering) position = clustering_position++;
          const char* order = c.kind != ColumnKind::kClustering ? "none" : c.order == SortOrder::kDesc ? "desc" : "asc";
          RowBuilder b(t);
          b.Text("keyspace_name", ks.name).Text("table_name", table->name).Text("column_name", c.name)
              .Text("clustering_order", order).Set("column_name_bytes", Value::Bytes(c.name))
              .Text("kind", KindName(c.kind)).Int("position", position).Text("type", c.type.ToCql());
          cols.push_back(b.Take());
        }
        // Rows in key order (column_name).
        std::sort(cols.begin(), cols.end(), [&](const SourceRow& a, const SourceRow& b) { return a.values[2] < b.values[2]; });
        for (auto& r : cols) rows.push_back(std::move(r));
      }
    }
  }
  return rows;
}

}  // namespace tessera::cql
