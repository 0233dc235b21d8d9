#include "cluster/cluster_status.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "cluster/etcd_client.h"
#include "cluster/node_load.h"
#include "cluster/placed_tables.h"
#include "cluster/replicated_tablet.h"
#include "cluster/tablet_placement.h"
#include "common/bytes.h"
#include "common/uuid.h"
#include "db/database.h"

namespace tessera::cluster {
namespace {

// Every stored placement of a table the catalog has, by keyspace and name.
Result<std::map<std::pair<std::string, std::string>, PlacedTable>> PlacedTables(const ReplicationServices& s) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<PlacedTable> placed, ReadPlacedTables(s));
  std::map<std::pair<std::string, std::string>, PlacedTable> out;
  for (auto& p : placed) out[{p.table->keyspace, p.table->name}] = std::move(p);
  return out;
}

}  // namespace

Result<std::string> ClusterStatusJson(const ReplicationServices& s) {
  TESSERA_ASSIGN_OR_RETURN(auto tables, PlacedTables(s));
  std::map<std::string, uint64_t> replicas_on;  // by host id
  uint64_t total = 0;
  for (const auto& [name, placed] : tables) {
    for (const auto& tablet : placed.placement) {
      for (const auto& host : tablet.replicas) ++replicas_on[host];
      total += tablet.replicas.size();
    }
  }
  TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult loads, s.membership->etcd().Range(kLoadPrefix, EtcdPrefixEnd(kLoadPrefix)));
  std::map<std::string, NodeLoad> load_of;  // by host id text
  for (const auto& kv : loads.kvs) {
    if (auto load = DecodeNodeLoad(kv.value); load.ok()) load_of[kv.key.substr(sizeof(kLoadPrefix) - 1)] = *load;
  }
  std::vector<MemberState> members = s.membership->Members();
  std::sort(members.begin(), members.end(), [](const MemberState& a, const MemberState& b) {
    return std::tie(a.record.data_center, a.record.address) < std::tie(b.record.data_center, b.record.address);
  });
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& m : members) {
    const std::string id = UuidText(m.record.host_id);
    const uint64_t placed = replicas_on[m.record.host_id];
    nlohmann::json node = {{"host_id", id},
                           {"address", m.record.address},
                           {"data_center", m.record.data_center},
                           {"rack", m.record.rack},
                           {"state", m.alive ? "up" : "down"},
                           {"load_bytes", nullptr},
                           {"load_at_micros", nullptr},
                           {"reads_per_second", nullptr},
                           {"writes_per_second", nullptr},
                           {"tablets", placed},
                           {"owns", total == 0 ? 0.0 : static_cast<double>(placed) / static_cast<double>(total)}};
    if (auto it = load_of.find(id); it != load_of.end()) {
      node["load_bytes"] = it->second.bytes;
      node["load_at_micros"] = it->second.at_micros;
      node["reads_per_second"] = it->second.replica_reads_per_second;
      node["writes_per_second"] = it->second.replica_writes_per_second;
    }
    nodes.push_back(std::move(node));
  }
  return nlohmann::json{{"nodes", nodes}, {"tablet_replicas", total}}.dump();
}

Result<std::string> ClusterTabletsJson(const ReplicationServices& s, const std::string& keyspace,
                                       const std::string& table) {
  if (!keyspace.empty()) TESSERA_RETURN_IF_ERROR(s.db->catalog().GetKeyspace(keyspace).status());
  if (!table.empty()) TESSERA_RETURN_IF_ERROR(s.db->catalog().GetTable(keyspace, table).status());
  TESSERA_ASSIGN_OR_RETURN(auto tables, PlacedTables(s));
  std::map<std::string, std::string> address_of;
  for (const auto& m : s.membership->Members()) address_of[m.record.host_id] = m.record.address;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, placed] : tables) {
    if ((!keyspace.empty() && name.first != keyspace) || (!table.empty() && name.second != table)) continue;
    for (const auto& tablet : placed.placement) {
      nlohmann::json replicas = nlohmann::json::array();
      for (const auto& host : tablet.replicas) {
        replicas.push_back({{"host_id", UuidText(host)}, {"address", address_of[host]}});
      }
      nlohmann::json transition = nullptr;
      if (tablet.transition) {
        transition = {{"stage", MigrationStageName(tablet.transition->stage)},
                      {"leaving", address_of[tablet.transition->leaving]},
                      {"pending", address_of[tablet.transition->pending]},
                      {"driver", tablet.transition->driver.empty() ? std::string() : address_of[tablet.transition->driver]}};
      }
      out.push_back({{"keyspace", name.first},
                     {"table", name.second},
                     {"start", ToHex(tablet.start)},
                     {"end", ToHex(tablet.end)},
                     {"replicas", replicas},
                     {"transition", transition}});
    }
  }
  return nlohmann::json{{"tablets", out}}.dump();
}

}  // namespace tessera::cluster
