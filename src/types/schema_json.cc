#include "types/schema_json.h"

#include <nlohmann/json.hpp>

#include "common/bytes.h"

namespace tessera {
namespace {

using nlohmann::json;

const char* KindName(ColumnKind k) {
  switch (k) {
    case ColumnKind::kPartitionKey: return "partition_key";
    case ColumnKind::kClustering: return "clustering";
    case ColumnKind::kStatic: return "static";
    case ColumnKind::kRegular: return "regular";
  }
  return "regular";
}

Result<ColumnKind> ParseKind(const std::string& s) {
  if (s == "partition_key") return ColumnKind::kPartitionKey;
  if (s == "clustering") return ColumnKind::kClustering;
  if (s == "static") return ColumnKind::kStatic;
  if (s == "regular") return ColumnKind::kRegular;
  return Status::Corruption("unknown column kind '" + s + "'");
}

}  // namespace

std::string TableToJson(const TableSchema& t) {
  json cols = json::array();
  for (const auto& c : t.columns) {
    cols.push_back({{"id", c.id}, {"name", c.name}, {"type", c.type.ToCql()}, {"kind", KindName(c.kind)},
                    {"order", c.order == SortOrder::kAsc ? "asc" : "desc"}});
  }
  json j = {{"format", 1},
            {"keyspace", t.keyspace},
            {"name", t.name},
            {"id", t.id},
            {"uuid", ToHex(t.uuid)},
            {"distribution", ToString(t.distribution)},
            {"options",
             {{"default_time_to_live", t.options.default_time_to_live},
              {"gc_grace_seconds", t.options.gc_grace_seconds},
              {"comment", t.options.comment},
              {"initial_tablets", t.options.initial_tablets},
              {"extra", t.options.extra}}},
            {"columns", cols}};
  if (t.buckets.enabled()) {
    json versions = json::array();
    for (const auto& v : t.buckets.versions) versions.push_back({{"start", ToHex(v.start)}, {"count", v.count}});
    j["buckets"] = {{"auto", t.buckets.automatic}, {"versions", versions}};
  }
  if (t.partition_buckets.enabled()) {
    json partitions = json::array();
    for (const auto& p : t.partition_buckets.partitions) {
      partitions.push_back({{"partition_key", ToHex(p.partition_key)}, {"counts", p.counts}});
    }
    j["partition_buckets"] = {
        {"auto", t.partition_buckets.automatic}, {"counts", t.partition_buckets.counts}, {"partitions", partitions}};
  }
  if (!t.indexes.empty()) {
    json indexes = json::array();
    for (const auto& i : t.indexes) {
      json index = {{"name", i.name}, {"column_id", i.column_id}, {"target", static_cast<int>(i.target)},
                    {"backing_table", i.backing_table}};
      if (i.is_vector()) {
        index["kind"] = "vector";
        index["class"] = i.class_name;
        index["similarity"] = SimilarityName(i.similarity);
      }
      indexes.push_back(std::move(index));
    }
    j["indexes"] = indexes;
  }
  if (!t.index_of.empty()) j["index_of"] = t.index_of;
  if (t.view) {
    j["view"] = {{"base_table", t.view->base_table},
                 {"base_uuid", ToHex(t.view->base_uuid)},
                 {"include_all_columns", t.view->include_all_columns},
                 {"where_clause", t.view->where_clause}};
  }
  if (!t.views.empty()) j["views"] = t.views;
  return j.dump();
}

Result<TableSchema> TableFromJson(const std::string& text, const UserTypeLookup* user_types) {
  try {
    json j = json::parse(text);
    if (j.at("format").get<int>() != 1) return Status::Corruption("unsupported table format");
    TableSchema t;
    t.keyspace = j.at("keyspace").get<std::string>();
    t.name = j.at("name").get<std::string>();
    t.id = j.at("id").get<uint32_t>();
    if (!FromHex(j.at("uuid").get<std::string>(), &t.uuid)) return Status::Corruption("bad table uuid");
    TESSERA_ASSIGN_OR_RETURN(t.distribution, ParseDistribution(j.at("distribution").get<std::string>()));
    const json& o = j.at("options");
    t.options.default_time_to_live = o.at("default_time_to_live").get<int32_t>();
    t.options.gc_grace_seconds = o.at("gc_grace_seconds").get<int32_t>();
    t.options.comment = o.at("comment").get<std::string>();
    t.options.initial_tablets = o.at("initial_tablets").get<uint32_t>();
    t.options.extra = o.at("extra").get<std::map<std::string, std::string>>();
    for (const json& c : j.at("columns")) {
      ColumnDef col;
      col.id = c.at("id").get<uint32_t>();
      col.name = c.at("name").get<std::string>();
      auto type = CqlType::Parse(c.at("type").get<std::string>(), user_types);
      if (!type.ok()) return Status::Corruption(type.status().message());
      col.type = std::move(type).value();
      TESSERA_ASSIGN_OR_RETURN(col.kind, ParseKind(c.at("kind").get<std::string>()));
      col.order = c.at("order").get<std::string>() == "desc" ? SortOrder::kDesc : SortOrder::kAsc;
      t.columns.push_back(std::move(col));
    }
    if (j.contains("buckets")) {
      const json& b = j.at("buckets");
      t.buckets.automatic = b.at("auto").get<bool>();
      for (const json& v : b.at("versions")) {
        BucketVersion version;
        if (!FromHex(v.at("start").get<std::string>(), &version.start)) return Status::Corruption("bad bucket start");
        version.count = v.at("count").get<uint32_t>();
        t.buckets.versions.push_back(std::move(version));
      }
    }
    if (j.contains("partition_buckets")) {
      const json& b = j.at("partition_buckets");
      t.partition_buckets.automatic = b.at("auto").get<bool>();
      t.partition_buckets.counts = b.at("counts").get<std::vector<uint32_t>>();
      for (const json& p : b.at("partitions")) {
        SplitPartition split;
        if (!FromHex(p.at("partition_key").get<std::string>(), &split.partition_key)) {
          return Status::Corruption("bad partition key of a raised partition");
        }
        split.counts = p.at("counts").get<std::vector<uint32_t>>();
        t.partition_buckets.partitions.push_back(std::move(split));
      }
    }
    if (j.contains("indexes")) {
      for (const json& i : j.at("indexes")) {
        IndexDef index;
        index.name = i.at("name").get<std::string>();
        index.column_id = i.at("column_id").get<uint32_t>();
        const int target = i.at("target").get<int>();
        if (target < 0 || target > static_cast<int>(IndexDef::Target::kFull)) return Status::Corruption("bad index target");
        index.target = static_cast<IndexDef::Target>(target);
        index.backing_table = i.at("backing_table").get<std::string>();
        if (i.value("kind", "global") == "vector") {
          index.kind = IndexDef::Kind::kVector;
          index.class_name = i.at("class").get<std::string>();
          auto similarity = ParseSimilarity(i.at("similarity").get<std::string>());
          if (!similarity) return Status::Corruption("bad vector index similarity");
          index.similarity = *similarity;
        }
        t.indexes.push_back(std::move(index));
      }
    }
    if (j.contains("index_of")) t.index_of = j.at("index_of").get<std::string>();
    if (j.contains("view")) {
      const json& v = j.at("view");
      ViewDef view;
      view.base_table = v.at("base_table").get<std::string>();
      if (!FromHex(v.at("base_uuid").get<std::string>(), &view.base_uuid)) return Status::Corruption("bad base table uuid");
      view.include_all_columns = v.at("include_all_columns").get<bool>();
      view.where_clause = v.at("where_clause").get<std::string>();
      t.view = std::move(view);
    }
    if (j.contains("views")) t.views = j.at("views").get<std::vector<std::string>>();
    return t;
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("table document: ") + e.what());
  }
}

std::string UserTypeToJson(const CqlType& type) {
  json fields = json::array();
  for (size_t i = 0; i < type.params().size(); ++i) {
    fields.push_back({{"name", type.field_names()[i]}, {"type", type.params()[i].ToCql()}});
  }
  json j = {{"format", 1}, {"keyspace", type.udt_keyspace()}, {"name", type.udt_name()}, {"fields", fields}};
  return j.dump();
}

Result<CqlType> UserTypeFromJson(const std::string& text, const UserTypeLookup* user_types) {
  try {
    json j = json::parse(text);
    if (j.at("format").get<int>() != 1) return Status::Corruption("unsupported user type format");
    std::vector<std::string> names;
    std::vector<CqlType> types;
    for (const json& f : j.at("fields")) {
      names.push_back(f.at("name").get<std::string>());
      auto type = CqlType::Parse(f.at("type").get<std::string>(), user_types);
      if (!type.ok()) return Status::NotFound(type.status().message());
      types.push_back(std::move(type).value());
    }
    if (names.empty()) return Status::Corruption("user type without fields");
    return CqlType::UserType(j.at("keyspace").get<std::string>(), j.at("name").get<std::string>(), std::move(names),
                             std::move(types), /*frozen=*/true);
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("user type document: ") + e.what());
  }
}

std::string KeyspaceToJson(const KeyspaceMetadata& ks) {
  json j = {{"format", 1}, {"name", ks.name}, {"replication", ks.replication}, {"durable_writes", ks.durable_writes}};
  return j.dump();
}

Result<KeyspaceMetadata> KeyspaceFromJson(const std::string& text) {
  try {
    json j = json::parse(text);
    if (j.at("format").get<int>() != 1) return Status::Corruption("unsupported keyspace format");
    KeyspaceMetadata ks;
    ks.name = j.at("name").get<std::string>();
    ks.replication = j.at("replication").get<std::map<std::string, std::string>>();
    ks.durable_writes = j.at("durable_writes").get<bool>();
    return ks;
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("keyspace document: ") + e.what());
  }
}

}  // namespace tessera
