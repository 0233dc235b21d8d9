// Splits and merges of replicated tablets, decided by one node (issue 28,
// item 4): every node's tablet balancer proposes what it would split or
// merge from what it sees (ClusterResizeProposals puts the proposals in
// etcd), and the balancer leader (cluster/placement_balancer.h) picks at
// most one change per placement tablet from the proposals of the live nodes
// (DecideResizes) and records it in the table's placement, which every node
// then applies (cluster/tablet_map_sync.h). So two nodes that both see a
// tablet hot no longer split it twice at nearby keys, and a tablet's fate
// is decided where the cluster's whole picture is. ScyllaDB's tablet load
// balancer likewise decides splits and merges on one node (the topology
// coordinator) from every node's statistics.
//
// etcd key (FROZEN: nodes of different releases read it):
//   /tessera/resize/<host id text> = {"version": 1, "proposals": [
//       {"table": uuid text, "kind": "split" | "merge",
//        "start": hex, "end": hex, "boundary": hex (merge only),
//        "position": hex (split only, optional: absent cuts at the median),
//        "reason": text}, ...]}
//   Keys are table-relative (tablet_placement.h's); an empty end is the
//   table's end. A split names the tablet's bounds; a merge names the left
//   tablet's start, the boundary between the two and the right one's end.
//   Written by the node when its proposals change (not their reasons),
//   replaced as a whole; proposals of nodes that are not alive are ignored.
//
// Thread safety: ClusterResizeProposals is thread-safe; the free functions
// are pure.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/tablet_placement.h"
#include "common/status.h"
#include "tablets/resize_proposals.h"

namespace tessera::cluster {

class EtcdClient;

inline constexpr char kResizePrefix[] = "/tessera/resize/";

// One node's proposal, in table-relative keys.
struct PlacementResizeProposal {
  std::string host;        // the proposing node's host id text (from its key)
  std::string table_uuid;  // text form
  ResizeProposal::Kind kind = ResizeProposal::Kind::kSplit;
  std::string start, end, boundary;
  std::optional<std::string> position;
  std::string reason;
  bool operator==(const PlacementResizeProposal& o) const {  // the same change, whatever the reason says
    return host == o.host && table_uuid == o.table_uuid && kind == o.kind && start == o.start && end == o.end &&
           boundary == o.boundary && position == o.position;
  }
};

std::string EncodeResizeProposals(const std::vector<PlacementResizeProposal>& proposals);
// `host`: the key's host id text, set on every proposal. Errors: Corruption.
Result<std::vector<PlacementResizeProposal>> DecodeResizeProposals(const std::string& text, const std::string& host);

// The leader's choice among `proposals` (of live nodes), over `placements`
// (table uuid text -> placement in key order): at most one change per
// placement tablet and round.
//  - A split stands when the placement still has the tablet with exactly
//    the proposed bounds, not in transition, and its cut (if any) lies
//    strictly inside; of several, a load split (a cut from a key sample)
//    beats a median one, then the lowest host id: one split, not one per
//    node.
//  - A merge stands when both tablets are still there with exactly the
//    proposed bounds, neither in transition, with the same replica set
//    (joining others would move data), proposed by one of those replicas
//    (a node that stores neither sees the pair empty), and no node proposes
//    splitting either: a node that sees one hot or large outweighs one that
//    sees the pair cold.
// Hosts are compared as given: the placements' replicas must be in the
// proposals' form (host id text).
// Returned in the order of `proposals`, the chosen proposal of each change.
std::vector<PlacementResizeProposal> DecideResizes(
    const std::map<std::string, std::vector<TabletReplicas>>& placements,
    const std::vector<PlacementResizeProposal>& proposals);

// This node's proposals (tablets/resize_proposals.h) for the tables of
// replicated keyspaces, published under kResizePrefix + its host id.
class ClusterResizeProposals : public ResizeProposals {
 public:
  // REQUIRES: etcd outlives this object. self_host_id: 16 bytes.
  ClusterResizeProposals(EtcdClient* etcd, std::string self_host_id);

  bool DecidedElsewhere(const TableSchema& table) override;
  // Puts the node's key when its proposals changed, only while the node's
  // record (kNodesPrefix + host id) exists: a node decommissioned or
  // removed publishes nothing. A failed or refused put is tried again at
  // the next call.
  void Propose(const TableSchema& table, std::vector<ResizeProposal> proposals) override;

 private:
  EtcdClient* const etcd_;
  const std::string self_;  // host id text
  std::mutex mu_;
  std::map<std::string, std::vector<PlacementResizeProposal>> by_table_;  // table uuid text -> proposals
  bool published_ = false;  // by_table_ is what etcd holds (a restarted node replaces its last life's key)
};

}  // namespace tessera::cluster
