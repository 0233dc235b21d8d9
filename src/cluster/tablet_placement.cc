#include "cluster/tablet_placement.h"

#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "cluster/etcd_client.h"
#include "common/bytes.h"
#include "common/uuid.h"

namespace tessera::cluster {
namespace {

Result<std::string> Unhex(const std::string& text) {
  std::string out;
  if (!FromHex(text, &out)) return Status::Corruption("a tablet placement bound is not hex: " + text);
  return out;
}

std::string EncodePlacement(const std::vector<TabletReplicas>& tablets) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : tablets) {
    nlohmann::json replicas = nlohmann::json::array();
    for (const auto& r : t.replicas) replicas.push_back(UuidText(r));
    nlohmann::json tablet = {{"start", ToHex(t.start)}, {"end", ToHex(t.end)}, {"replicas", replicas}};
    if (t.transition) {
      // No "leaving" (a replica added) or no "pending" (one dropped): a
      // replication factor change.
      tablet["transition"] = {{"stage", MigrationStageName(t.transition->stage)}};
      if (!t.transition->leaving.empty()) tablet["transition"]["leaving"] = UuidText(t.transition->leaving);
      if (!t.transition->pending.empty()) tablet["transition"]["pending"] = UuidText(t.transition->pending);
      if (!t.transition->driver.empty()) tablet["transition"]["driver"] = UuidText(t.transition->driver);
    }
    list.push_back(std::move(tablet));
  }
  return nlohmann::json{{"version", 1}, {"tablets", list}}.dump();
}

}  // namespace

Result<std::vector<TabletReplicas>> DecodePlacement(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("tablets")) return Status::Corruption("not a tablet placement");
  std::vector<TabletReplicas> out;
  try {
    for (const auto& t : j.at("tablets")) {
      TabletReplicas r;
      TESSERA_ASSIGN_OR_RETURN(r.start, Unhex(t.at("start").get<std::string>()));
      TESSERA_ASSIGN_OR_RETURN(r.end, Unhex(t.at("end").get<std::string>()));
      for (const auto& h : t.at("replicas")) {
        TESSERA_ASSIGN_OR_RETURN(std::string id, UuidFromText(h.get<std::string>()));
        r.replicas.push_back(std::move(id));
      }
      if (t.contains("transition")) {
        const auto& j = t.at("transition");
        TabletTransition tr;
        TESSERA_ASSIGN_OR_RETURN(tr.stage, MigrationStageFromName(j.at("stage").get<std::string>()));
        if (j.contains("leaving")) {
          TESSERA_ASSIGN_OR_RETURN(tr.leaving, UuidFromText(j.at("leaving").get<std::string>()));
        }
        if (j.contains("pending")) {
          TESSERA_ASSIGN_OR_RETURN(tr.pending, UuidFromText(j.at("pending").get<std::string>()));
        }
        if (tr.leaving.empty() && tr.pending.empty()) {
          return Status::Corruption("a tablet transition with neither a leaving nor a pending replica");
        }
        if (j.contains("driver")) {
          TESSERA_ASSIGN_OR_RETURN(tr.driver, UuidFromText(j.at("driver").get<std::string>()));
        }
        r.transition = std::move(tr);
      }
      out.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("tablet placement: ") + e.what());
  }
  return out;
}

namespace {

// `count` nodes of `dc_nodes` (sorted by host id) starting at `offset`,
// one per rack first.
std::vector<std::string> PickInDc(const std::vector<PlacementNode>& dc_nodes, size_t offset, int count) {
  std::vector<std::string> picked;
  std::set<std::string> racks;
  std::vector<bool> taken(dc_nodes.size(), false);
  for (int pass = 0; pass < 2 && static_cast<int>(picked.size()) < count; ++pass) {
    for (size_t i = 0; i < dc_nodes.size() && static_cast<int>(picked.size()) < count; ++i) {
      const size_t k = (offset + i) % dc_nodes.size();
      if (taken[k] || (pass == 0 && racks.count(dc_nodes[k].rack))) continue;
      taken[k] = true;
      racks.insert(dc_nodes[k].rack);
      picked.push_back(dc_nodes[k].host_id);
    }
  }
  return picked;
}

}  // namespace

Result<std::vector<std::string>> PlaceReplicas(const ReplicationFactors& factors, std::vector<PlacementNode> nodes,
                                               size_t tablet_index, const std::string& default_dc) {
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.host_id < b.host_id; });
  std::map<std::string, int> wanted = factors.per_dc;
  if (!factors.network_topology) {
    // SimpleStrategy ignores data centers: one ring of every node.
    for (auto& n : nodes) n.data_center = default_dc;
    wanted = {{default_dc, factors.simple_factor}};
  }
  std::vector<std::string> replicas;
  for (const auto& [dc, factor] : wanted) {
    if (factor == 0) continue;
    std::vector<PlacementNode> dc_nodes;
    for (const auto& n : nodes) {
      if (n.data_center == dc) dc_nodes.push_back(n);
    }
    if (static_cast<int>(dc_nodes.size()) < factor) {
      return Status::InvalidArgument("Replication factor " + std::to_string(factor) + " exceeds the number of nodes " +
                                     std::to_string(dc_nodes.size()) + " in " + dc);
    }
    auto picked = PickInDc(dc_nodes, tablet_index % dc_nodes.size(), factor);
    replicas.insert(replicas.end(), picked.begin(), picked.end());
  }
  return replicas;
}

Result<std::shared_ptr<const std::vector<TabletReplicas>>> TabletPlacements::Get(const std::string& table_uuid,
                                                                                 const MakePlacement& make) {
  if (auto cached = Cached(table_uuid)) return cached;
  // Not under mu_: `make` reads the node's tablets, and etcd answers slowly.
  const std::string key = kTabletsPrefix + UuidText(table_uuid);
  TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult current, etcd_->Range(key));
  std::string text;
  int64_t revision = 0;
  if (!current.kvs.empty()) {
    text = current.kvs.front().value;
    revision = current.kvs.front().mod_revision;
  } else {
    TESSERA_ASSIGN_OR_RETURN(std::vector<TabletReplicas> made, make());
    EtcdCompare absent;
    absent.key = key;
    absent.target = EtcdCompare::Target::kCreateRevision;
    absent.revision = 0;
    TESSERA_ASSIGN_OR_RETURN(EtcdTxnResult txn,
                             etcd_->Txn({absent}, {EtcdOp::Put(key, EncodePlacement(made))}, {EtcdOp::Range(key)}));
    if (txn.succeeded) {
      text = EncodePlacement(made);
      revision = txn.revision;
    } else if (!txn.ranges.empty() && !txn.ranges.front().empty()) {
      text = txn.ranges.front().front().value;  // another node created it first
      revision = txn.ranges.front().front().mod_revision;
    } else {
      return Status::IOError("tablet placement of a table vanished while it was created");
    }
  }
  TESSERA_RETURN_IF_ERROR(Update(table_uuid, text, revision));
  return Cached(table_uuid);
}

bool HoldsOrReceives(const std::vector<TabletReplicas>& placement, const std::string& host, const std::string& key) {
  const TabletReplicas* t = PlacementOf(placement, key);
  if (!t) return true;
  if (std::find(t->replicas.begin(), t->replicas.end(), host) != t->replicas.end()) return true;
  return t->transition && t->transition->pending == host;
}

const TabletReplicas* PlacementOf(const std::vector<TabletReplicas>& placement, const std::string& key) {
  for (const auto& t : placement) {
    if (t.Contains(key)) return &t;
  }
  return nullptr;
}

// Replaces the placement by the result of `change` (nullopt: nothing to
// do) in a transaction on the key's mod_revision, retried on lost races.
Result<int64_t> TabletPlacements::Change(const std::string& table_uuid, const PlacementChange& change,
                                         const std::vector<EtcdCompare>& fence) {
  const std::string key = kTabletsPrefix + UuidText(table_uuid);
  int64_t failed_at = -1;  // the mod_revision a transaction last failed on
  for (int attempt = 0; attempt < 20; ++attempt) {
    TESSERA_ASSIGN_OR_RETURN(EtcdRangeResult current, etcd_->Range(key));
    if (current.kvs.empty()) return Status::NotFound("table " + UuidText(table_uuid) + " has no placement yet");
    const EtcdKeyValue& kv = current.kvs.front();
    TESSERA_ASSIGN_OR_RETURN(std::vector<TabletReplicas> placement, DecodePlacement(kv.value));
    TESSERA_ASSIGN_OR_RETURN(auto changed, change(std::move(placement)));
    if (!changed) {
      TESSERA_RETURN_IF_ERROR(Update(table_uuid, kv.value, kv.mod_revision));
      return int64_t{0};
    }
    // Failing twice on an unchanged placement: the fence failed, not the race.
    if (kv.mod_revision == failed_at) return Status::Busy("fenced: a condition of the change no longer holds");
    EtcdCompare unchanged;
    unchanged.key = key;
    unchanged.target = EtcdCompare::Target::kModRevision;
    unchanged.revision = kv.mod_revision;
    std::vector<EtcdCompare> compares{unchanged};
    compares.insert(compares.end(), fence.begin(), fence.end());
    const std::string text = EncodePlacement(*changed);
    TESSERA_ASSIGN_OR_RETURN(EtcdTxnResult txn, etcd_->Txn(compares, {EtcdOp::Put(key, text)}));
    if (txn.succeeded) {
      TESSERA_RETURN_IF_ERROR(Update(table_uuid, text, txn.revision));
      return txn.revision;
    }
    failed_at = kv.mod_revision;
  }
  return Status::Busy("tablet placement of " + UuidText(table_uuid) + " changed 20 times during a tablet change");
}

std::vector<EtcdCompare> KeyCreatedAtFence(const std::string& key, int64_t create_revision) {
  if (key.empty()) return {};
  EtcdCompare leader;
  leader.key = key;
  leader.target = EtcdCompare::Target::kCreateRevision;
  leader.revision = create_revision;
  return {leader};
}

std::vector<EtcdCompare> BalancerLeaderFence(int64_t leader_term) {
  if (leader_term == 0) return {};
  return KeyCreatedAtFence(kBalancerLeaderKey, leader_term);
}

Result<bool> TabletPlacements::RecordSplit(const std::string& table_uuid, const std::string& split,
                                           const std::vector<EtcdCompare>& fence) {
  auto revision = Change(table_uuid, [&](std::vector<TabletReplicas> placement)
                                -> Result<std::optional<std::vector<TabletReplicas>>> {
    auto pos = std::find_if(placement.begin(), placement.end(), [&](const auto& t) { return t.Contains(split); });
    if (pos == placement.end()) return Status::Corruption("no placement tablet holds the split key");
    using Changed = std::optional<std::vector<TabletReplicas>>;
    if (pos->start == split) return Changed();
    if (pos->transition) return Status::InvalidArgument("the tablet is being migrated: it splits once the move ends");
    TabletReplicas right = *pos;
    right.start = split;
    pos->end = split;
    placement.insert(std::next(pos), std::move(right));
    return Changed(std::move(placement));
  }, fence);
  if (!revision.ok()) return revision.status();
  return *revision != 0;
}

Result<bool> TabletPlacements::RecordMerge(const std::string& table_uuid, const std::string& boundary,
                                           const std::vector<EtcdCompare>& fence) {
  auto revision = Change(table_uuid, [&](std::vector<TabletReplicas> placement)
                                -> Result<std::optional<std::vector<TabletReplicas>>> {
    auto right = std::find_if(placement.begin(), placement.end(), [&](const auto& t) { return t.start == boundary; });
    using Changed = std::optional<std::vector<TabletReplicas>>;
    if (boundary.empty() || right == placement.end() || right == placement.begin()) return Changed();
    auto left = std::prev(right);
    if (left->transition || right->transition) {
      return Status::InvalidArgument("a tablet being migrated merges once the move ends");
    }
    if (left->replicas != right->replicas) {
      return Status::InvalidArgument("the two tablets have different replica sets: joining them would move data");
    }
    left->end = right->end;
    placement.erase(right);
    return Changed(std::move(placement));
  }, fence);
  if (!revision.ok()) return revision.status();
  return *revision != 0;
}

Result<int64_t> TabletPlacements::ChangeTablet(const std::string& table_uuid, const std::string& start,
                                               const TabletChange& change, const std::vector<EtcdCompare>& fence) {
  return Change(table_uuid, [&](std::vector<TabletReplicas> placement)
                                -> Result<std::optional<std::vector<TabletReplicas>>> {
    auto pos = std::find_if(placement.begin(), placement.end(), [&](const auto& t) { return t.start == start; });
    if (pos == placement.end()) return Status::NotFound("no tablet of the placement starts at " + ToHex(start));
    TESSERA_ASSIGN_OR_RETURN(std::optional<TabletReplicas> changed, change(*pos));
    using Changed = std::optional<std::vector<TabletReplicas>>;
    if (!changed) return Changed();
    *pos = std::move(*changed);
    return Changed(std::move(placement));
  }, fence);
}

Status TabletPlacements::Update(const std::string& table_uuid, const std::string& text, int64_t revision) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<TabletReplicas> placement, DecodePlacement(text));
  auto shared = std::make_shared<const std::vector<TabletReplicas>>(std::move(placement));
  std::lock_guard<std::mutex> lock(mu_);
  Cache& c = cache_[table_uuid];
  if (c.placement && c.revision >= revision) return Status::OK();  // an older version arrived late
  c.placement = std::move(shared);
  c.revision = revision;
  return Status::OK();
}

std::shared_ptr<const std::vector<TabletReplicas>> TabletPlacements::Cached(const std::string& table_uuid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(table_uuid);
  return it == cache_.end() ? nullptr : it->second.placement;
}

}  // namespace tessera::cluster
