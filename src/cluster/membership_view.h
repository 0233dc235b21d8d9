// MembershipView: the executor's ClusterView (cql/executor/cluster_view.h)
// over Membership, so that system.peers and system.peers_v2 list the other
// members. Before Attach, and after Detach, it lists no one.
//
// Thread safety: thread-safe; Attach/Detach from the thread that owns the
// Membership.
#pragma once

#include <atomic>

#include "cluster/membership.h"
#include "cql/executor/cluster_view.h"

namespace tessera::cluster {

class MembershipView : public cql::ClusterView {
 public:
  // REQUIRES: membership outlives the attachment (Detach before it goes).
  void Attach(Membership* membership) { membership_.store(membership); }
  void Detach() { membership_.store(nullptr); }
  std::vector<cql::PeerInfo> Peers() const override;

 private:
  std::atomic<Membership*> membership_{nullptr};
};

}  // namespace tessera::cluster
