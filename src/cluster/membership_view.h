// MembershipView: the executor's ClusterView (cql/executor/cluster_view.h)
// over Membership, so that system.peers and system.peers_v2 list the other
// members, and every node reports the tokens of the cluster's routing ring
// (cluster/routing_tokens.h) from the tablet placements it holds. Before
// Attach, and after Detach, it lists no one; before AttachRouting, every
// node reports its fixed token. Before AttachPaxos, system.paxos is empty.
//
// Thread safety: thread-safe; Attach/Detach from the thread that owns the
// Membership.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "cluster/membership.h"
#include "cql/executor/cluster_view.h"

namespace tessera {
class Database;
}

namespace tessera::cluster {

class ReplicaService;
class TabletPlacements;

class MembershipView : public cql::ClusterView {
 public:
  // REQUIRES: membership outlives the attachment (Detach before it goes).
  void Attach(Membership* membership) { membership_.store(membership); }
  // REQUIRES: both outlive the attachment (Detach before they go).
  void AttachRouting(const Database* db, TabletPlacements* placements) {
    db_.store(db);
    placements_.store(placements);
  }
  // REQUIRES: replica outlives the attachment (Detach before it goes).
  void AttachPaxos(ReplicaService* replica) { replica_.store(replica); }
  void Detach() {
    replica_.store(nullptr);
    membership_.store(nullptr);
    placements_.store(nullptr);
    db_.store(nullptr);
  }
  std::vector<cql::PeerInfo> Peers() const override;
  std::vector<int64_t> LocalTokens() const override;
  std::vector<cql::PaxosRowInfo> PaxosRows() const override;

 private:
  // Host id -> tokens for every one of `members` (fixed tokens without a reference table).
  std::map<std::string, std::vector<int64_t>> Ring(const std::vector<MemberState>& members) const;

  std::atomic<Membership*> membership_{nullptr};
  std::atomic<const Database*> db_{nullptr};
  std::atomic<TabletPlacements*> placements_{nullptr};
  std::atomic<ReplicaService*> replica_{nullptr};
};

}  // namespace tessera::cluster
