#include "cluster/tablet_resize.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cluster/etcd_client.h"
#include "cluster/node_record.h"
#include "cluster/replica_reads.h"
#include "common/bytes.h"
#include "common/uuid.h"
#include "types/schema.h"

namespace tessera::cluster {

std::string EncodeResizeProposals(const std::vector<PlacementResizeProposal>& proposals) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : proposals) {
    const bool split = p.kind == ResizeProposal::Kind::kSplit;
    nlohmann::json j{{"table", p.table_uuid},
                     {"kind", split ? "split" : "merge"},
                     {"start", ToHex(p.start)},
                     {"end", ToHex(p.end)},
                     {"reason", p.reason}};
    if (!split) j["boundary"] = ToHex(p.boundary);
    if (split && p.position) j["position"] = ToHex(*p.position);
    list.push_back(std::move(j));
  }
  return nlohmann::json{{"version", 1}, {"proposals", list}}.dump();
}

namespace {

bool HexField(const nlohmann::json& j, const char* field, std::string* out) {
  out->clear();
  if (!j.contains(field)) return true;
  return j[field].is_string() && FromHex(j[field].get<std::string>(), out);
}

}  // namespace

Result<std::vector<PlacementResizeProposal>> DecodeResizeProposals(const std::string& text, const std::string& host) {
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("proposals") || !doc["proposals"].is_array()) {
    return Status::Corruption("resize proposals: not a proposal list");
  }
  std::vector<PlacementResizeProposal> out;
  for (const auto& j : doc["proposals"]) {
    PlacementResizeProposal p;
    p.host = host;
    if (!j.is_object() || !j.contains("table") || !j["table"].is_string() || !j.contains("kind") ||
        !j["kind"].is_string()) {
      return Status::Corruption("resize proposals: a proposal without table or kind");
    }
    p.table_uuid = j["table"].get<std::string>();
    const std::string kind = j["kind"].get<std::string>();
    if (kind != "split" && kind != "merge") return Status::Corruption("resize proposals: unknown kind " + kind);
    p.kind = kind == "split" ? ResizeProposal::Kind::kSplit : ResizeProposal::Kind::kMerge;
    std::string position;
    if (!HexField(j, "start", &p.start) || !HexField(j, "end", &p.end) || !HexField(j, "boundary", &p.boundary) ||
        !HexField(j, "position", &position)) {
      return Status::Corruption("resize proposals: a key that is not hex");
    }
    if (j.contains("position")) p.position = position;
    if (j.contains("reason") && j["reason"].is_string()) p.reason = j["reason"].get<std::string>();
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// The placement tablet with exactly these bounds, or nullptr.
const TabletReplicas* Exactly(const std::vector<TabletReplicas>& placement, const std::string& start,
                              const std::string& end) {
  for (const auto& t : placement) {
    if (t.start == start && t.end == end) return &t;
  }
  return nullptr;
}

bool Inside(const TabletReplicas& t, const std::string& key) {
  return t.start < key && (t.end.empty() || key < t.end);
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

std::vector<PlacementResizeProposal> DecideResizes(
    const std::map<std::string, std::vector<TabletReplicas>>& placements,
    const std::vector<PlacementResizeProposal>& proposals) {
  using Tablet = std::pair<std::string, std::string>;  // (table uuid, start)
  // The best split proposal of each tablet.
  std::map<Tablet, size_t> split_of;
  for (size_t i = 0; i < proposals.size(); ++i) {
    const auto& p = proposals[i];
    if (p.kind != ResizeProposal::Kind::kSplit) continue;
    auto placement = placements.find(p.table_uuid);
    if (placement == placements.end()) continue;
    const TabletReplicas* t = Exactly(placement->second, p.start, p.end);
    if (t == nullptr || t->transition || (p.position && !Inside(*t, *p.position))) continue;
    auto [it, fresh] = split_of.emplace(Tablet{p.table_uuid, p.start}, i);
    if (fresh) continue;
    const auto& best = proposals[it->second];
    const bool better = p.position.has_value() != best.position.has_value() ? p.position.has_value()
                                                                            : p.host < best.host;
    if (better) it->second = i;
  }
  // Tablets some node wants split, chosen or not: never merged this round.
  std::set<Tablet> taken;
  for (const auto& p : proposals) {
    if (p.kind == ResizeProposal::Kind::kSplit) taken.insert({p.table_uuid, p.start});
  }
  std::set<size_t> chosen;
  for (const auto& [tablet, i] : split_of) chosen.insert(i);
  for (size_t i = 0; i < proposals.size(); ++i) {
    const auto& p = proposals[i];
    if (p.kind != ResizeProposal::Kind::kMerge) continue;
    auto placement = placements.find(p.table_uuid);
    if (placement == placements.end()) continue;
    const TabletReplicas* left = Exactly(placement->second, p.start, p.boundary);
    const TabletReplicas* right = Exactly(placement->second, p.boundary, p.end);
    if (left == nullptr || right == nullptr || left->transition || right->transition) continue;
    if (Sorted(left->replicas) != Sorted(right->replicas)) continue;
    // Only a node storing the pair knows its size; one that does not sees it empty.
    if (std::find(left->replicas.begin(), left->replicas.end(), p.host) == left->replicas.end()) continue;
    const Tablet l{p.table_uuid, p.start}, r{p.table_uuid, p.boundary};
    if (taken.count(l) || taken.count(r)) continue;
    taken.insert(l);
    taken.insert(r);
    chosen.insert(i);
  }
  std::vector<PlacementResizeProposal> out;
  for (size_t i : chosen) out.push_back(proposals[i]);
  return out;
}

ClusterResizeProposals::ClusterResizeProposals(EtcdClient* etcd, std::string self_host_id)
    : etcd_(etcd), self_(UuidText(self_host_id)) {}

bool ClusterResizeProposals::DecidedElsewhere(const TableSchema& table) {
  return !table.keyspace.starts_with("system");  // as ClusterReplicaResolver: system tables stay node-local
}

void ClusterResizeProposals::Propose(const TableSchema& table, std::vector<ResizeProposal> proposals) {
  const std::string uuid = UuidText(table.uuid);
  std::vector<PlacementResizeProposal> relative;
  for (auto& p : proposals) {
    PlacementResizeProposal r;
    r.host = self_;
    r.table_uuid = uuid;
    r.kind = p.kind;
    auto start = RelativeKey(table.id, p.start), end = RelativeKey(table.id, p.end);
    if (!start) continue;
    r.start = *start;
    r.end = end.value_or("");
    if (p.kind == ResizeProposal::Kind::kMerge) {
      auto boundary = RelativeKey(table.id, p.boundary);
      if (!boundary || boundary->empty()) continue;
      r.boundary = *boundary;
    }
    if (p.split_position) {
      auto position = RelativeKey(table.id, *p.split_position);
      if (!position || position->empty()) continue;
      r.position = *position;
    }
    r.reason = std::move(p.reason);
    relative.push_back(std::move(r));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& standing = by_table_[uuid];
  const bool changed = standing != relative;
  standing = std::move(relative);  // the newest reasons
  if (standing.empty()) by_table_.erase(uuid);
  if (!changed && published_) return;
  std::vector<PlacementResizeProposal> all;
  for (const auto& [t, list] : by_table_) all.insert(all.end(), list.begin(), list.end());
  // Only while the node is a member: decommission and removenode delete its
  // record and this key in one transaction, and a leaving node's balancer
  // still running must not put the key back for good.
  const EtcdCompare member{kNodesPrefix + self_, EtcdCompare::Target::kVersion, EtcdCompare::Result::kGreater, 0, {}};
  auto put = etcd_->Txn({member}, {EtcdOp::Put(kResizePrefix + self_, EncodeResizeProposals(all))});
  published_ = put.ok() && put->succeeded;
  if (!put.ok()) spdlog::warn("tablets: publishing this node's split and merge proposals failed: {}", put.status().ToString());
}

}  // namespace tessera::cluster
