#include "cluster/membership_view.h"

#include "cluster/replica_service.h"
#include "cluster/routing_tokens.h"
#include "cluster/tablet_placement.h"
#include "db/database.h"

namespace tessera::cluster {

std::map<std::string, std::vector<int64_t>> MembershipView::Ring(const std::vector<MemberState>& members) const {
  std::vector<std::string> hosts;
  for (const MemberState& s : members) hosts.push_back(s.record.host_id);
  const Database* db = db_.load();
  TabletPlacements* placements = placements_.load();
  std::shared_ptr<const std::vector<TabletReplicas>> reference;
  std::string reference_uuid;
  if (db != nullptr && placements != nullptr) {
    for (const auto& table : db->catalog().AllTables()) {
      if (table->distribution != Distribution::kHash || table->keyspace.starts_with("system")) continue;
      auto placement = placements->Cached(table->uuid);
      if (!placement || placement->empty()) continue;
      if (!reference || placement->size() > reference->size() ||
          (placement->size() == reference->size() && table->uuid < reference_uuid)) {
        reference = placement;
        reference_uuid = table->uuid;
      }
    }
  }
  if (reference) return RingOfPlacement(*reference, hosts);
  std::map<std::string, std::vector<int64_t>> fixed;
  for (const MemberState& s : members) fixed[s.record.host_id] = {s.record.token};
  return fixed;
}

std::vector<cql::PeerInfo> MembershipView::Peers() const {
  std::vector<cql::PeerInfo> peers;
  Membership* m = membership_.load();
  if (m == nullptr) return peers;
  const std::vector<MemberState> members = m->Members();
  auto ring = Ring(members);
  for (const MemberState& s : members) {
    if (s.record.host_id == m->self().host_id) continue;
    cql::PeerInfo p;
    p.host_id = s.record.host_id;
    p.address = s.record.address;
    p.cql_port = s.record.cql_port;
    p.data_center = s.record.data_center;
    p.rack = s.record.rack;
    p.release_version = s.record.release_version;
    p.schema_version = s.schema_version;
    auto it = ring.find(s.record.host_id);
    p.tokens = it != ring.end() ? it->second : std::vector<int64_t>{s.record.token};
    p.alive = s.alive;
    peers.push_back(std::move(p));
  }
  return peers;
}

std::vector<cql::PaxosRowInfo> MembershipView::PaxosRows() const {
  std::vector<cql::PaxosRowInfo> out;
  ReplicaService* replica = replica_.load();
  if (replica == nullptr) return out;
  auto rows = replica->PaxosRows();
  if (!rows.ok()) return out;
  for (auto& r : *rows) {
    out.push_back({std::move(r.table_uuid), std::move(r.partition), std::move(r.promised), std::move(r.accepted_ballot),
                   std::move(r.accepted_update), std::move(r.committed_ballot), std::move(r.committed_update)});
  }
  return out;
}

std::vector<int64_t> MembershipView::LocalTokens() const {
  Membership* m = membership_.load();
  if (m == nullptr) return {};
  auto ring = Ring(m->Members());
  auto it = ring.find(m->self().host_id);
  return it != ring.end() ? it->second : std::vector<int64_t>{m->self().token};
}

}  // namespace tessera::cluster
