// Tablet placement: which nodes hold the replicas of each tablet, chosen
// once per table and kept in etcd so that every node routes to the same
// replicas whatever joins later.
//
// etcd key (FROZEN: nodes of different releases read it):
//   /tessera/tablets/<table uuid text> = {"version": 1, "tablets": [
//       {"start": hex, "end": hex, "replicas": [host id text, ...],
//        "transition": {"stage": name, "leaving": host id text,
//                       "pending": host id text}   (only while migrating;
//                       cluster/tablet_transition.h; a replication factor
//                       change leaves out "leaving" when it adds a replica,
//                       "pending" when it drops one)}, ...]}
// with table-relative bounds (a storage key without its 4-byte table id; an
// empty end is the table's end). The first node to need a table's placement
// computes it from the members at that moment and creates the key if it is
// absent (a transaction comparing its create revision with 0); every node
// then uses the winner's. A split (RecordSplit) replaces one tablet by two
// holding the same replicas, a merge (RecordMerge) two neighbours holding
// the same replicas by one, each in a transaction comparing the key's
// mod_revision, so concurrent changes by different nodes all land; nodes
// learn of it through their watch (cluster/tablet_map_sync.h). "version" is
// the format (1). A tablet migration (cluster/tablet_migration.h) writes a
// transition on one tablet and finally its new replicas the same way
// (ChangeTablet).
//
// PlaceReplicas follows the rules Cassandra's strategies keep: per data
// center its replication factor of distinct nodes, racks spread (a node of
// every rack before a second node of any), and consecutive tablets starting
// on different nodes so that load spreads.
//
// Thread safety: PlaceReplicas is pure; TabletPlacements is thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/etcd_client.h"
#include "cluster/replication_strategy.h"
#include "cluster/tablet_transition.h"
#include "common/status.h"

namespace tessera::cluster {

class EtcdClient;

inline constexpr char kTabletsPrefix[] = "/tessera/tablets/";
// The placement balancer's leader key (value: the leader's host id text;
// FROZEN; cluster/placement_balancer.h).
inline constexpr char kBalancerLeaderKey[] = "/tessera/balancer/leader";

// The condition that fences a leader's placement writes: `key` still has
// create revision `create_revision` (the one it had when this node took
// it), so once the key expired or another node holds it the write fails.
// Empty for an empty key (no fence).
std::vector<EtcdCompare> KeyCreatedAtFence(const std::string& key, int64_t create_revision);
// KeyCreatedAtFence of the balancer leader key at `leader_term`; empty for
// term 0 (no fence).
std::vector<EtcdCompare> BalancerLeaderFence(int64_t leader_term);

struct PlacementNode {
  std::string host_id;  // 16 bytes
  std::string data_center, rack;
};

// The replicas (host ids) of the tablet numbered `tablet_index` in table
// order. Errors: InvalidArgument when a data center has fewer nodes than its
// factor ("Replication factor 3 exceeds the number of nodes 2 in datacenter1").
Result<std::vector<std::string>> PlaceReplicas(const ReplicationFactors& factors,
                                               std::vector<PlacementNode> nodes, size_t tablet_index,
                                               const std::string& default_dc);

struct TabletReplicas {
  std::string start, end;  // table-relative; empty end: the table's end
  std::vector<std::string> replicas;  // host ids
  std::optional<TabletTransition> transition;  // a replica on the move
  bool Contains(const std::string& key) const { return start <= key && (end.empty() || key < end); }
};

// A placement as stored in etcd (the key's value). Errors: Corruption.
Result<std::vector<TabletReplicas>> DecodePlacement(const std::string& text);

// The placement tablet holding table-relative key `key`, or nullptr.
const TabletReplicas* PlacementOf(const std::vector<TabletReplicas>& placement, const std::string& key);

// Whether `host` (16 bytes) is a replica, or the pending replica of a move,
// of the placement tablet holding table-relative key `key` (true when no
// tablet holds it: the caller cannot tell).
bool HoldsOrReceives(const std::vector<TabletReplicas>& placement, const std::string& host, const std::string& key);

class TabletPlacements {
 public:
  // `etcd` must outlive this object.
  explicit TabletPlacements(EtcdClient* etcd) : etcd_(etcd) {}

  // The placement of a table: read from etcd, or, when absent, made by
  // `make` and created there (the first creator wins; its placement is
  // returned to everyone). Cached per table uuid. Errors: IOError (etcd),
  // Corruption, and make's errors.
  using MakePlacement = std::function<Result<std::vector<TabletReplicas>>()>;
  Result<std::shared_ptr<const std::vector<TabletReplicas>>> Get(const std::string& table_uuid,
                                                                  const MakePlacement& make);
  // Splits the placement tablet holding table-relative key `split` at it
  // (both halves keep its replicas). Returns false when `split` already
  // starts a tablet. `fence`: more conditions the transaction needs
  // (BalancerLeaderFence). Errors: NotFound when the table has no placement
  // yet, Busy ("fenced") when a `fence` condition failed, Busy after 20 lost
  // races, IOError (etcd), Corruption.
  Result<bool> RecordSplit(const std::string& table_uuid, const std::string& split,
                           const std::vector<EtcdCompare>& fence = {});
  // Joins the placement tablets on either side of table-relative boundary
  // `boundary`. Returns false when no tablet starts there (already joined).
  // Errors: InvalidArgument when the two have different replica sets (a
  // join would move data: tablet migration); those of RecordSplit.
  Result<bool> RecordMerge(const std::string& table_uuid, const std::string& boundary,
                           const std::vector<EtcdCompare>& fence = {});
  // Replaces the placement tablet starting at table-relative `start` by
  // what `change` makes of it (nullopt: nothing to do), in a transaction on
  // the key's mod_revision; returns the etcd revision of the new value (0
  // when nothing changed). `fence`: more conditions the transaction needs
  // (the balancer leader's key still being its own: a deposed leader writes
  // nothing). Errors: NotFound when no tablet starts at `start`; Busy
  // ("fenced") when a `fence` condition failed; those of `change` and of
  // RecordSplit.
  using TabletChange = std::function<Result<std::optional<TabletReplicas>>(TabletReplicas tablet)>;
  Result<int64_t> ChangeTablet(const std::string& table_uuid, const std::string& start, const TabletChange& change,
                               const std::vector<EtcdCompare>& fence = {});
  // Replaces the cached placement with `text`, the key's value at etcd
  // revision `revision` (its mod_revision), unless the cache holds a newer
  // one (watch events and this node's own transactions race). Errors:
  // Corruption.
  Status Update(const std::string& table_uuid, const std::string& text, int64_t revision);
  // The cached placement, or nullptr.
  std::shared_ptr<const std::vector<TabletReplicas>> Cached(const std::string& table_uuid);

 private:
  using PlacementChange =
      std::function<Result<std::optional<std::vector<TabletReplicas>>>(std::vector<TabletReplicas> placement)>;
  // Returns the new value's revision, 0 when `change` changed nothing.
  Result<int64_t> Change(const std::string& table_uuid, const PlacementChange& change,
                         const std::vector<EtcdCompare>& fence = {});

  EtcdClient* etcd_;
  std::mutex mu_;
  struct Cache {
    std::shared_ptr<const std::vector<TabletReplicas>> placement;
    int64_t revision = 0;
  };
  std::map<std::string, Cache> cache_;  // by table uuid; guarded by mu_
};

}  // namespace tessera::cluster
