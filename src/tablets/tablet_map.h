// Tablet metadata: one table's tablets as plain values, and the pure
// operations on them (lookup, split, merge, JSON). No I/O and no policy: the
// database persists the map and decides when to split or merge.
//
// A tablet owns the storage keys in [start, end). The tablets of a table
// cover [TablePrefix(id), TablePrefix(id + 1)) with no gap or overlap.
// Boundaries are partition positions or token prefixes (keys/storage_key.h),
// so no partition is ever cut in two (a partition-bucketed table's
// sub-partitions are partition positions of their own, and may be apart).
//  - hash tables start with N (power of two) tablets of equal token ranges;
//  - range tables start with one tablet.
//
// Counters (reads, writes, bytes) live behind a shared_ptr so that copies of
// the map (copy-on-write snapshots) count into the same tablet.
//
// A tablet is bounds and counters only: who serves its reads and writes (the
// local replica, or on a cluster node the coordinator of a replicated tablet)
// is chosen for each request (ReplicaResolver below), so the map holds no
// replica of another node (issue 28, item 4 and must-show 5).
//
// Thread safety: a TabletMap is not synchronised; the owner publishes
// immutable snapshots. TabletCounters are atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tablets/key_sample.h"
#include "tablets/load_window.h"
#include "tablets/replica.h"
#include "types/schema.h"

namespace tessera {

using TabletId = uint64_t;

struct TabletCounters {
  std::atomic<uint64_t> reads{0};          // rows returned by reads
  std::atomic<uint64_t> writes{0};         // row-level writes (rows, deletions)
  std::atomic<uint64_t> bytes_read{0};     // stored bytes read
  std::atomic<uint64_t> bytes_written{0};  // stored bytes written (keys + values)
  // The same over the last LoadWindow::kSeconds seconds (rows and bytes per second).
  LoadWindow read_rate, write_rate, read_bytes_rate, write_bytes_rate;

  // Requests per second this node served as a replica of the tablet
  // (cluster layer: a coordinator's read or write of the tablet's keys that
  // reached this node's storage, from itself or from another node). The
  // counters above count where a request was coordinated; these count where
  // it was served, which is what a placement balancer moves.
  LoadWindow replica_read_rate, replica_write_rate;
  // Bytes (keys + values) of the writes applied to this node's copy as a
  // replica, since the tablet was created: on a node that stores a tablet
  // other nodes coordinate, bytes_written above stays 0 while its copy grows,
  // and this is what tells the size check to count it (TabletBalancer).
  std::atomic<uint64_t> replica_bytes_written{0};

  // Recently accessed partitions (split-key choice, tail detection).
  KeySample sample;

  // Where the rates' history begins, in microseconds since the epoch (the
  // `since` of LoadWindow::Rate); 0: at the tablet's creation. A split half
  // or a merged tablet inherits its parents' windows and their beginning
  // (TabletMap::Split, Merge). Set before the tablet is published.
  int64_t rates_since_micros = 0;

  void CountRead(int64_t now_micros, uint64_t rows, uint64_t bytes) {
    reads += rows;
    CountReadBytes(now_micros, bytes);
    read_rate.Add(now_micros, rows);
  }
  void CountReadBytes(int64_t now_micros, uint64_t bytes) {
    bytes_read += bytes;
    read_bytes_rate.Add(now_micros, bytes);
  }
  void CountReplicaRequest(int64_t now_micros, bool write, uint64_t bytes = 0) {
    (write ? replica_write_rate : replica_read_rate).Add(now_micros, 1);
    if (write) replica_bytes_written += bytes;
  }
  void CountWrite(int64_t now_micros, uint64_t rows, uint64_t bytes) {
    writes += rows;
    bytes_written += bytes;
    write_rate.Add(now_micros, rows);
    write_bytes_rate.Add(now_micros, bytes);
  }
};

struct Tablet {
  TabletId id = 0;
  std::string start;  // inclusive
  std::string end;    // exclusive
  int64_t created_micros = 0;
  std::shared_ptr<TabletCounters> counters = std::make_shared<TabletCounters>();
  bool Contains(std::string_view key) const { return start <= key && key < end; }
  // The `since` of this tablet's rates (TabletCounters::rates_since_micros).
  int64_t rates_since_micros() const { return counters->rates_since_micros ? counters->rates_since_micros : created_micros; }
};

// Where a split or merge comes from: decided on this node (the balancer, an
// operator), or applied from the cluster's tablet metadata, which already
// holds it (another node recorded it there first).
enum class TabletChangeOrigin { kThisNode, kPlacement };

// A split or merge's origin and, for one a cluster's balancer leader
// decided, the leadership it was decided under (`leader_term`: the cluster
// layer's number for that leadership, cluster/tablet_placement.h
// BalancerLeaderFence; 0: none). A resolver records a change with a term
// only while that leadership still holds, so a deposed leader's late
// decision changes nothing (Busy "fenced"). Implicit from an origin alone.
struct TabletChangeSource {
  TabletChangeSource(TabletChangeOrigin o = TabletChangeOrigin::kThisNode) : origin(o) {}  // NOLINT(runtime/explicit)
  TabletChangeSource(TabletChangeOrigin o, int64_t term) : origin(o), leader_term(term) {}
  TabletChangeOrigin origin;
  int64_t leader_term = 0;
};

// Chooses who serves a request to a tablet. The Coordinator
// (coordinator/coordinator.h), when one is attached, asks it for every
// request it sends to a tablet (each key read, write group, range-read
// step's iterator); the cluster layer answers for the tablets of replicated
// keyspaces with a coordinator that spreads the request over the tablet's
// replica set (cluster/replicated_tablet.h), made for that request from the
// schema it was given, so an ALTER TABLE option reaches the next request.
// Nothing is cached in the tablet map (the map holds no replica), and the
// replica-local store (Database) never holds one.
// Thread safety: implementations are thread-safe.
class ReplicaResolver {
 public:
  virtual ~ReplicaResolver() = default;
  // The replica serving a request to `tablet` of `table` (the schema the
  // request reads); nullptr for the node's local replica. Cheap: no I/O, no
  // waiting (called on the request's thread for each tablet it reaches).
  virtual std::shared_ptr<Replica> ReplicaFor(const std::shared_ptr<const TableSchema>& table,
                                              const Tablet& tablet) = 0;
};

// What the replica-local store (Database) asks a cluster about its tablets:
// placement metadata and leave for a split or merge, never a replica or a
// request to another node. The cluster layer implements it beside its
// ReplicaResolver (cluster/replicated_tablet.h).
// Thread safety: implementations are thread-safe.
class TabletPlacementView {
 public:
  virtual ~TabletPlacementView() = default;
  // Host ids (16 bytes) of the nodes holding `tablet` of `table`, from the
  // placement as known without waiting; empty for a node-local table (a
  // system keyspace's) or a placement not known yet.
  virtual std::vector<std::string> Hosts(const TableSchema& table, const Tablet& tablet) = 0;
  // Whether this node holds a copy of it: true for a node-local table.
  virtual bool StoredHere(const TableSchema& table, const Tablet& tablet) = 0;
  // Asked before `tablet` of `table` splits at storage key `split`: OK lets
  // the split go ahead here. A split decided here (kThisNode) the cluster
  // layer first records in the cluster's tablet metadata, which every other
  // node then applies (kPlacement: checked against that metadata, nothing
  // recorded). A source with a leader term is recorded only while that
  // leadership holds (else Busy). Errors refuse the split (the tablet stays whole). Called under
  // Database's tablet-change lock: it may read Database (tablets, catalog)
  // but must not split, merge or publish tablets.
  [[nodiscard]] virtual Status BeforeSplit(const TableSchema& table, const Tablet& tablet, const std::string& split,
                                           const TabletChangeSource& source) = 0;
  // The same before `left` and its right neighbour `right` merge. Errors
  // refuse the merge (InvalidArgument when the two have different replica
  // sets: joining them would move data).
  [[nodiscard]] virtual Status BeforeMerge(const TableSchema& table, const Tablet& left, const Tablet& right,
                                           const TabletChangeSource& source) = 0;
};

class TabletMap {
 public:
  // The initial tablets of a new table: hash tables `initial_tablets` equal
  // token ranges; bucketed range tables one per bucket of the current count;
  // other range tables one.
  static TabletMap Create(const TableSchema& table, int64_t now_micros);

  uint32_t table_id() const { return table_id_; }
  const std::vector<Tablet>& tablets() const { return tablets_; }
  // The tablet owning `key`. REQUIRES: key starts with the table's prefix.
  const Tablet& Find(std::string_view key) const;
  // nullptr when no tablet has this id.
  const Tablet* FindById(TabletId id) const;

  // Replaces tablet `id` by [start, split_key) and [split_key, end) with new ids.
  // Each half's rates start from the parent's recent load times the share of
  // the parent's key sample that falls in it (half each when the sample is
  // empty); its sample keeps the parent's keys in its range.
  // Errors: NotFound (no such tablet), InvalidArgument (split_key not strictly inside).
  Result<std::pair<TabletId, TabletId>> Split(TabletId id, std::string split_key, int64_t now_micros);
  // Replaces tablet `left_id` and its right neighbour by one tablet with a new
  // id, whose rates start from the sum of both tablets'.
  // Errors: NotFound, InvalidArgument (no right neighbour).
  Result<TabletId> Merge(TabletId left_id, int64_t now_micros);

  std::string ToJson() const;
  // Errors: Corruption on a malformed document.
  static Result<TabletMap> FromJson(const std::string& text);

 private:
  uint32_t table_id_ = 0;
  TabletId next_id_ = 1;
  std::vector<Tablet> tablets_;  // sorted by start
};

}  // namespace tessera
