// ResizeProposals: where a node's tablet balancer (db/tablet_balancer.h)
// sends the splits and merges of tables whose resizes another node decides.
// On a cluster the tablets of a replicated table are the cluster's, not the
// node's: each node's balancer still measures what it sees (sizes of the
// replicas it holds, the load it coordinates, its key sample) and says what
// it would do, and the cluster's balancer leader decides and records one
// change per tablet in the table's placement (issue 28, item 4; ScyllaDB's
// load balancer likewise decides tablet splits and merges on one node from
// every node's statistics). The cluster layer implements it
// (cluster/tablet_resize.h); a single node has none and its balancer acts.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessera {

class TableSchema;

// One split or merge a node's balancer would make. Keys are storage keys of
// this node's tablet map (absolute: they start with the table's prefix).
struct ResizeProposal {
  enum class Kind { kSplit, kMerge };
  Kind kind = Kind::kSplit;
  // split: the tablet's bounds; merge: the left tablet's start and the
  // right one's end.
  std::string start, end;
  std::string boundary;  // merge: where the right tablet starts
  std::optional<std::string> split_position;  // split: the cut; absent: the median partition
  std::string reason;  // the policy's, for system.tablet_events
};

class ResizeProposals {
 public:
  virtual ~ResizeProposals() = default;
  // Whether `table`'s splits and merges are decided by another node: the
  // balancer then proposes them here instead of carrying them out.
  virtual bool DecidedElsewhere(const TableSchema& table) = 0;
  // This node's standing proposals for `table`, replacing those of the
  // balancer's last round for it (empty: none). Called on the balancer's
  // thread, once per table per round; must not block on the network for
  // long (it may write to the cluster's metadata store).
  virtual void Propose(const TableSchema& table, std::vector<ResizeProposal> proposals) = 0;
};

}  // namespace tessera
