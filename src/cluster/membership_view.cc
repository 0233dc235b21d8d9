#include "cluster/membership_view.h"

namespace tessera::cluster {

std::vector<cql::PeerInfo> MembershipView::Peers() const {
  std::vector<cql::PeerInfo> peers;
  Membership* m = membership_.load();
  if (m == nullptr) return peers;
  for (const MemberState& s : m->Members()) {
    if (s.record.host_id == m->self().host_id) continue;
    cql::PeerInfo p;
    p.host_id = s.record.host_id;
    p.address = s.record.address;
    p.cql_port = s.record.cql_port;
    p.data_center = s.record.data_center;
    p.rack = s.record.rack;
    p.release_version = s.record.release_version;
    p.schema_version = s.schema_version;
    p.token = s.record.token;
    p.alive = s.alive;
    peers.push_back(std::move(p));
  }
  return peers;
}

}  // namespace tessera::cluster
