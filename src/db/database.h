// tessera::Database — the replica-local store of one node: schema, tablets
// and this node's copy of their rows. It knows nothing of other nodes: the
// Coordinator above it (coordinator/coordinator.h) sends a cluster's requests
// to the tablets' replicas; what Database asks a cluster about its tablets
// (who holds them, leave to split or merge) goes through a
// TabletPlacementView, which holds no replica.
//
// Schema: keyspaces and tables (Catalog), persisted. Data: Apply() routes a
// Mutation to the tablet that owns its partition and writes this node's
// replica; reads go through the same routing (reader.h). Tablets: list with
// counters and size estimates, split at a partition boundary, merge
// neighbours; all online (reads and writes go on; paging cursors stay valid).
//
// Timestamps: a mutation without USING TIMESTAMP gets max(clock, last + 1)
// microseconds, so server-side timestamps are strictly increasing per node.
//
// Thread safety: every method is thread-safe. Split and merge are
// serialised with each other; reads and writes never block on them beyond
// swapping a tablet-map pointer.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <thread>
#include <string>
#include <vector>

#include "common/latency_histogram.h"
#include "common/status.h"
#include "db/catalog.h"
#include "db/guardrails.h"
#include "db/large_partitions.h"
#include "db/tablet_balancer.h"
#include "db/mutation.h"
#include "db/mutation_builder.h"
#include "db/materialized_view.h"
#include "db/secondary_index.h"
#include "db/vector_index.h"
#include "db/sequences.h"
#include "db/reader.h"
#include "storage/storage_engine.h"
#include "tablets/balancer_policy.h"
#include "tablets/tablet_map.h"

namespace tessera {

class Failpoints;


struct DatabaseOptions {
  std::string data_dir;                      // created if missing
  // Durability: StorageOptions' commitlog_sync and its period and window.
  CommitlogSync commitlog_sync = CommitlogSync::kPeriodic;
  int64_t commitlog_sync_period_micros = 10'000'000;
  int64_t commitlog_sync_group_window_micros = 15'000;
  size_t block_cache_bytes = 0;              // StorageOptions::block_cache_bytes (0: from memory)
  size_t max_successive_merges = 16;         // StorageOptions::max_successive_merges
  // Hit by every read (failpoint replica.read.<keyspace>.<table>,
  // common/failpoints.h); null: none. REQUIRES: outlives the database.
  Failpoints* failpoints = nullptr;
  std::function<int64_t()> clock_micros;     // default: system clock (tests inject one)
  // Automatic split and merge (db/tablet_balancer.h); off unless enabled.
  BalancerOptions balancer;
  // The balancer's thread starts at StartBalancer, not at Open (a cluster
  // node first attaches its replica resolver).
  bool defer_balancer = false;
  Guardrails guardrails;
};

// A tablet as shown to users: metadata, counters since it was created, and
// size estimates (bytes from RocksDB's approximate sizes including
// memtables; rows = bytes / the store's average key-value size).
struct TabletStatus {
  TabletId id = 0;
  std::string start, end;  // storage-key bounds [start, end)
  int64_t created_micros = 0;
  uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
  uint64_t size_bytes = 0;
  uint64_t rows_estimate = 0;
  // Over the last LoadWindow::kSeconds seconds.
  // Rates divide by the tablet's age while it is younger than the window.
  double reads_per_second = 0, writes_per_second = 0, read_bytes_per_second = 0, write_bytes_per_second = 0;
  // Requests this node served as one of the tablet's replicas, per second
  // over the same window (CountReplicaRequest; a node's own range reads,
  // RangeQuery::internal, are not counted); 0 on a single node.
  double replica_reads_per_second = 0, replica_writes_per_second = 0;
  // "normal", "hot" (load above the split threshold) or "hold: <condition>"
  // (hot, and the balancer declines to split it; see TabletHold).
  std::string state = "normal";
  // Host ids (16 bytes) of the nodes holding it (Replica::Hosts); empty on
  // a single node.
  std::vector<std::string> replicas;
};

// Per-table request metrics (Prometheus, server/metrics_text.h). Latencies
// are measured inside the database: routing, storage and reconciliation, not
// the network.
struct TableMetrics {
  LatencyHistogram read_latency;   // ReadRow, ReadSlice, ScanRange calls
  LatencyHistogram write_latency;  // ApplyBatch calls touching the table
  std::atomic<uint64_t> splits{0}, merges{0};
  // Requests this node served as a replica of the table's tablets since it
  // started (CountReplicaRequest): the per-node load a cluster's report sums.
  std::atomic<uint64_t> replica_reads{0}, replica_writes{0};
};

// Reads of a table that visited more tombstones than the warn threshold.
struct TombstoneReport {
  uint64_t reads = 0;            // such reads since the table was opened
  uint64_t max_tombstones = 0;   // the most one read visited
  uint64_t live_rows_at_max = 0; // rows that read returned
  int64_t last_micros = 0;
};

// The busiest partitions of a table (Space-Saving sketches, tablets/top_k.h).
struct HotPartition {
  std::vector<std::string> partition_key;  // serialized components
  uint64_t count = 0;                      // upper bound of operations
  uint64_t error = 0;                      // count - error is a lower bound
};

struct TabletEvent {
  int64_t at_micros = 0;
  uint32_t table_id = 0;
  std::string kind;                // "split" or "merge"
  std::vector<TabletId> from, to;
  std::string reason;
};

// A tablet split or merged away, with its counters when it was replaced.
// Writes in flight on the old tablet-map snapshot may still land on it
// afterwards and are not included. The Key Visualizer passes what a tablet took
// since its last sample on to its successors (keyviz/history.h).
struct RetiredTablet {
  uint64_t sequence = 0;   // 1, 2, ... in the order tablets were replaced
  uint32_t table_id = 0;
  TabletId id = 0;
  std::string start, end;  // storage-key bounds [start, end)
  int64_t at_micros = 0;   // when it was replaced
  uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
};

class Database {
 public:
  // Opens (or creates) the database in options.data_dir and loads the catalog
  // and tablet maps. Errors: IOError, Corruption.
  static Result<std::unique_ptr<Database>> Open(const DatabaseOptions& options);
  ~Database();

  // --- Schema ---
  Status CreateKeyspace(const KeyspaceMetadata& ks, bool if_not_exists = false);
  Status DropKeyspace(const std::string& name, bool if_exists = false);
  // Errors: NotFound, IOError.
  Status AlterKeyspace(const KeyspaceMetadata& ks) { return catalog_.AlterKeyspace(ks); }
  // User-defined types; see Catalog::CreateType, AlterType, DropType.
  Status CreateType(const CqlType& type) { return catalog_.CreateType(type); }
  Status AlterType(const CqlType& type) { return catalog_.AlterType(type); }
  Status DropType(const std::string& keyspace, const std::string& name) { return catalog_.DropType(keyspace, name); }
  // User-defined functions and aggregates; see Catalog::CreateFunction and the rest.
  Status CreateFunction(const UserFunction& f, bool or_replace) { return catalog_.CreateFunction(f, or_replace); }
  Status CreateAggregate(const UserAggregate& a, bool or_replace) { return catalog_.CreateAggregate(a, or_replace); }
  Result<UserFunction> DropFunction(const std::string& keyspace, const std::string& name,
                                    const std::optional<std::vector<CqlType>>& argument_types) {
    return catalog_.DropFunction(keyspace, name, argument_types);
  }
  Result<UserAggregate> DropAggregate(const std::string& keyspace, const std::string& name,
                                      const std::optional<std::vector<CqlType>>& argument_types) {
    return catalog_.DropAggregate(keyspace, name, argument_types);
  }
  // Creates the table and its initial tablets; see Catalog::CreateTable.
  Result<std::shared_ptr<const TableSchema>> CreateTable(TableSchema table, bool if_not_exists = false);
  Result<std::shared_ptr<const TableSchema>> AlterTable(TableSchema table);
  Status DropTable(const std::string& keyspace, const std::string& name, bool if_exists = false);
  // --- Secondary indexes (db/secondary_index.h; db/index_ddl.cc) ---
  // Adds `index` (name set, column_id, target; backing_table is set here to
  // "<name>_index") to table keyspace.table and creates its backing table.
  // Keeping its entries right, and building them for the rows already there,
  // is the coordinator's (coordinator/coordinator.h). Returns the base
  // table's new schema. Errors: NotFound (table), AlreadyExists ("Index 'x'
  // already exists"), InvalidArgument (a duplicate of another index, a taken
  // backing-table name, BackingTableSchema's refusals), IOError.
  Result<std::shared_ptr<const TableSchema>> CreateIndex(const std::string& keyspace, const std::string& table,
                                                         IndexDef index);
  // Removes index `name` of the keyspace and drops its backing table. Returns
  // the base table's new schema. Errors: NotFound, IOError.
  Result<std::shared_ptr<const TableSchema>> DropIndex(const std::string& keyspace, const std::string& name);
  // The table holding index `name` and the index, or NotFound.
  // The storage keys of the `k` rows this node stores nearest `query` by
  // vector index `index` of `table` (db/vector_index.h), restricted to
  // `ranges` (absolute storage keys; empty: all), nearest first. `ef`: the
  // search's candidate list (0: the default). Errors: VectorIndexes::Search's.
  Result<std::vector<VectorCandidate>> SearchVectorIndex(const TableSchema& table, const std::string& index,
                                                         const std::vector<float>& query, size_t k,
                                                         const std::vector<std::pair<std::string, std::string>>& ranges,
                                                         size_t ef = 0) {
    return vector_indexes_->Search(table.id, index, query, k, ranges, ef);
  }
  size_t VectorIndexSize(const TableSchema& table, const std::string& index) {
    return vector_indexes_->Size(table.id, index);
  }
  Result<std::pair<std::shared_ptr<const TableSchema>, IndexDef>> FindIndex(const std::string& keyspace,
                                                                            const std::string& name) const;
  // --- Materialized views (db/materialized_view.h; db/view_ddl.cc) ---
  // Creates view table `view` (view->view set, uuid set by the caller so that
  // every node of a cluster gets the same one) with tablets of its own and
  // adds it to its base table's views. Keeping its rows right on every base
  // write, and building them, is the coordinator's (coordinator/coordinator.h).
  // Returns the view's schema. Errors: NotFound (base table), AlreadyExists
  // (a table of that name), InvalidArgument (ValidateViewDefinition's
  // refusals), IOError.
  Result<std::shared_ptr<const TableSchema>> CreateView(TableSchema view);
  // Removes view `name` of the keyspace from its base table's views, then
  // drops it. Errors: NotFound (no such view), IOError.
  Status DropView(const std::string& keyspace, const std::string& name);

  // Removes every row of this node's copy (and its indexes' and views'),
  // keeps schema and tablets (a cluster's TRUNCATE reaches every replica
  // through Coordinator::TruncateTable). Errors: NotFound, IOError.
  Status TruncateTable(const std::string& keyspace, const std::string& name);
  // The tables a TRUNCATE of `table` empties first, as Cassandra: its
  // secondary indexes' backing tables (no entry outlives its row; a vector
  // index's entries go with the rows), then its views.
  static std::vector<std::string> TruncatedWith(const TableSchema& table);
  Result<std::shared_ptr<const TableSchema>> GetTable(const std::string& keyspace, const std::string& name) const;
  const Catalog& catalog() const { return catalog_; }
  // Gives a bucketed table (TableSchema::buckets) a new bucket count online
  // (db/bucket_layout_change.cc): writes are held back while the greatest
  // partition key written is found; the new count applies from just above it,
  // so the hot tail of a monotonic key moves at once, older partitions stay in
  // their buckets and nothing is rewritten. The tablets are then split at the
  // new buckets' starts, and a "buckets" event records `reason`. Returns the
  // new schema. Errors: InvalidArgument (not bucketed, count out of range,
  // BucketLayout::kMaxVersions counts in use),
  // NotFound, IOError.
  Result<std::shared_ptr<const TableSchema>> ChangeBucketCount(const TableSchema& table, uint32_t count,
                                                               const std::string& reason);
  // Adds `count` to the partition-bucket history (TableSchema::partition_buckets,
  // db/partition_bucket_change.cc) of the partition at logical position
  // `partition` (an 'auto' raise), or of the whole table when it is nullopt
  // (ALTER ... WITH partition_buckets = N): new writes use the new count, rows
  // written earlier stay where they are and reads merge every count in use.
  // Writes are held back meanwhile. A "partition_buckets" event records
  // `reason`. Returns the new schema (unchanged when `count` is already
  // current). Errors: InvalidArgument (no partition buckets, count out of
  // range, PartitionBucketLayout::kMaxCounts counts in use or
  // kMaxSplitPartitions partitions raised), NotFound, IOError.
  Result<std::shared_ptr<const TableSchema>> ChangePartitionBuckets(const TableSchema& table,
                                                                    const std::optional<std::string>& partition,
                                                                    uint32_t count, const std::string& reason);
  // The catalog's current snapshot of a bucketed or partition-bucketed table (the one whose layout
  // writes and reads must use: a prepared statement may hold an older one);
  // `table` itself otherwise, or when it was dropped.
  std::shared_ptr<const TableSchema> CurrentLayout(const std::shared_ptr<const TableSchema>& table) const;

  // Bit-reversed sequences (db/sequences.h), persisted with the schema;
  // a dropped keyspace drops its sequences.
  Sequences& sequences() { return *sequences_; }

  // --- Data: this node's replica ---
  // Every read and write takes the request's consistency level and write
  // type (tablets/request_consistency.h) and hands it to the local replica,
  // which ignores all but its trace. The default, ONE, is what a single
  // node's own callers use; the Coordinator passes the request's.
  //
  // Errors: InvalidArgument (see BuildWriteSet), NotFound (table dropped), IOError.
  Status Apply(const Mutation& mutation, const RequestConsistency& consistency = kLocalConsistency);
  // All mutations in one atomic write (a logged batch). Secondary indexes
  // and materialized views are not kept here: writes to tables that have
  // them go through the Coordinator (coordinator/coordinator.h), which calls
  // this for the base write and for the derived rows. Appends a warning to
  // `warnings` (when given) for each written partition measured above a
  // partition warn threshold. Errors as Apply, and InvalidArgument when a
  // written partition is measured at or above a fail threshold (nothing is
  // written).
  Status ApplyBatch(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings = nullptr,
                    const RequestConsistency& consistency = kLocalConsistency);
  // A write routed to its tablets and built into one WriteSet (RouteWrite),
  // and what CountRoutedWrite counts once its replicas took it.
  struct RoutedWrite {
    int64_t started = 0, now = 0;  // steady and write-timestamp micros
    WriteSet ws;
    struct Part {
      std::shared_ptr<const TabletMap> map;
      const Tablet* tablet;
      BuiltMutation::Part part;
    };
    std::vector<Part> parts;
    std::vector<BuiltMutation> built;
    std::vector<uint32_t> tables;  // per mutation
  };
  // The first half of ApplyBatch, also for a coordinator that sends the
  // WriteSet to the tablets' replicas itself: the mutations built at one
  // fresh timestamp (in their tables' current layouts) and routed to their
  // tablets, with the partition guardrails' warnings and refusals. Takes no
  // layout lock: REQUIRES the caller holds ApplyBatch's, or layouts that do
  // not change online (a cluster node's, cluster_tablets()). Errors: as ApplyBatch.
  [[nodiscard]] Status RouteWrite(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                                  RoutedWrite* out);
  // Counts a routed write its replicas took (tablet counters, hot
  // partitions, write latency).
  void CountRoutedWrite(const RoutedWrite& write);
  Result<std::optional<RowResult>> ReadRow(const std::shared_ptr<const TableSchema>& table,
                                           const std::vector<std::string>& partition_key,
                                           const std::vector<std::string>& clustering,
                                           const RequestConsistency& consistency = kLocalConsistency);
  // As ReadRow, answering through `done` (db/reader.h ReadRowAsync).
  // REQUIRES: this Database outlives the answer.
  void ReadRowAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& partition_key,
                    const std::vector<std::string>& clustering, const RequestConsistency& consistency, RowDone done);
  Result<SliceResult> ReadSlice(const std::shared_ptr<const TableSchema>& table,
                                const std::vector<std::string>& partition_key, const SliceRequest& request,
                                const RequestConsistency& consistency = kLocalConsistency);
  // As ReadSlice, answering through `done` (db/reader.h ReadSliceAsync).
  // REQUIRES: this Database outlives the answer (as ReadRowAsync).
  void ReadSliceAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& partition_key,
                      const SliceRequest& request, const RequestConsistency& consistency, SliceDone done);
  Result<RangeResult> ScanRange(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request,
                                const RequestConsistency& consistency = kLocalConsistency);
  // As ScanRange, answering through `done` (db/reader.h ScanRangeAsync).
  // REQUIRES: this Database outlives the answer (as ReadRowAsync).
  void ScanRangeAsync(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request,
                      const RequestConsistency& consistency, RangeDone done);
  // What a read of `table` (as given: pass CurrentLayout(table)) at `consistency` needs from
  // this store: tablets, clock, hot-partition counts, and this node's
  // replica for every tablet (a coordinator gives ReadContext::replica_of its
  // own choice). REQUIRES: this Database outlives the context.
  ReadContext MakeReadContext(const std::shared_ptr<const TableSchema>& table, const RequestConsistency& consistency);
  // The table's current tablet map; nullptr once dropped. Thread-safe.
  std::shared_ptr<const TabletMap> TabletsOf(uint32_t table_id) const;
  // The failpoint replica.read.<keyspace>.<table> (common/failpoints.h) every
  // read of the table hits, here or in the coordinator: OK when off.
  [[nodiscard]] Status HitReadFailpoint(const TableSchema& table);
  // The failpoint `name` of this node (common/failpoints.h: blocks while it
  // pauses, IOError when it fails): OK when off or without failpoints.
  [[nodiscard]] Status HitFailpoint(const std::string& name);
  // This node's replica (every tablet's on a single node).
  const std::shared_ptr<Replica>& local_replica() const { return local_replica_; }

  // --- Tablets ---
  // Lets `placement` answer who holds each tablet (TabletStatus::replicas,
  // TabletRange::stored_here, this node's own copy for housekeeping) and
  // allow each split and merge first (TabletPlacementView::BeforeSplit /
  // BeforeMerge: a replicated tablet's map changes through the cluster's
  // metadata first); bucket-count changes then return InvalidArgument.
  // nullptr: a single node again.
  // REQUIRES: `placement` stays alive until no split, merge or status
  // listing can still use it (a node: until its CQL server stopped).
  void AttachPlacementView(TabletPlacementView* placement);
  // True while a placement view is attached (a cluster node: the balancer
  // then leaves bucket counts alone, and layouts do not change online).
  bool cluster_tablets() const { return placement_.load(std::memory_order_acquire) != nullptr; }
  std::vector<TabletStatus> Tablets(const TableSchema& table);
  // The bounds of a table's tablets and whether this node stores each
  // (Replica::StoredHere); cheap (no size estimates), in key order.
  struct TabletRange {
    std::string start, end;
    bool stored_here = true;
  };
  std::vector<TabletRange> TabletRanges(const TableSchema& table);
  // Whether this node stores a copy of `tablet` (always, on a single node;
  // else as the placement view says).
  bool StoredHere(const TableSchema& table, const Tablet& tablet) const;
  // The balancer policy's view of a table: bounds, ages, sizes, rates and key samples.
  TableLoad TabletLoads(const TableSchema& table);
  // Hot tablets the balancer declines to split (empty when it is off).
  std::vector<TabletHold> TabletHolds() const;
  // nullptr unless DatabaseOptions::balancer.enabled.
  TabletBalancer* balancer() { return balancer_.get(); }
  // Starts the balancer's thread when Open deferred it (defer_balancer);
  // does nothing otherwise. REQUIRES: called at most once.
  void StartBalancer();
  const BalancerOptions& balancer_options() const { return balancer_options_; }
  // Splits a tablet at `split_position` (a partition position or token
  // prefix, see keys/storage_key.h), or, when absent, at its middle: the
  // middle token for hash tables, the median partition for range tables.
  // Returns the two new tablet ids. Errors: NotFound (also when the tablet
  // split or merged while its median was found), InvalidArgument (a tablet
  // holding a single partition: a partition is never split). The median is
  // read without holding the lock DDL, splits and merges take. `source`
  // reaches the attached placement view (TabletPlacementView::BeforeSplit,
  // BeforeMerge): kPlacement for a change the cluster's metadata already
  // holds; a leader term for the balancer leader's decision (Busy once that
  // leadership is gone).
  Result<std::pair<TabletId, TabletId>> SplitTablet(const TableSchema& table, TabletId tablet,
                                                    std::optional<std::string> split_position = std::nullopt,
                                                    const std::string& reason = "manual",
                                                    const TabletChangeSource& source = {});
  // Where SplitTablet without a position would cut tablet `tablet`: the
  // middle token or the median partition of this node's own copy (what a
  // node proposes; it reads nothing over the network). Errors: as
  // SplitTablet's (NotFound, also when this node stores no copy;
  // InvalidArgument for a single partition).
  Result<std::string> MiddleSplitPosition(const TableSchema& table, TabletId tablet);
  // Where a split without a position cuts a hash table's tablet: its middle
  // token's prefix, when strictly inside it (nullopt for range tables).
  static std::optional<std::string> MiddleToken(const TableSchema& table, const Tablet& tablet);
  // The median partition position among the first 4,096 partitions `it`
  // (over the tablet's keys, from any copy) holds.
  // Errors: InvalidArgument (fewer than two partitions), the iterator's.
  static Result<std::string> MedianPartition(const TableSchema& table, const Tablet& tablet, KvIterator* it);
  Result<TabletId> MergeTablets(const TableSchema& table, TabletId left, const std::string& reason = "manual",
                                const TabletChangeSource& source = {});
  std::vector<TabletEvent> TabletEvents() const;
  // Tablets replaced after the one numbered `after_sequence`, oldest first;
  // the last kMaxRetiredTablets are kept. A tablet is recorded here after the
  // map without it is published, so a caller that asks before it lists the
  // tablets never sees a tablet both listed and retired.
  static constexpr size_t kMaxRetiredTablets = 4096;
  std::vector<RetiredTablet> RetiredTablets(uint64_t after_sequence) const;
  // The `n` partitions with the most row writes (or point and slice reads)
  // since the table was opened, and the total the shares refer to.
  std::vector<HotPartition> HotPartitions(const TableSchema& table, bool writes, size_t n, uint64_t* total);
  void RecordTabletEvent(TabletEvent e);
  // Counts one request served as a replica (TabletCounters::
  // CountReplicaRequest) on the tablet of table `table_id` holding storage
  // key `key` (absolute), and on the table's TableMetrics totals; a write's
  // `bytes` (keys + values applied to this node's copy) count towards the
  // tablet's replica_bytes_written. Does nothing for a dropped table.
  // Thread-safe.
  void CountReplicaRequest(uint32_t table_id, std::string_view key, bool write, uint64_t bytes = 0);

  // --- Detection ---
  const Guardrails& guardrails() const { return guardrails_; }
  LargePartitionTracker& large_partitions() { return large_partitions_; }
  // The stored key and value bytes of tablet `id` in this node's own copy,
  // counted by iterating and stopping once above `limit`. RocksDB's size
  // estimate for memtables is coarse for small ranges (before RocksDB 9.8),
  // so size splits are checked with this. Errors: NotFound (no such tablet,
  // or this node stores no copy of it), IOError.
  Result<uint64_t> MeasureTabletBytes(const TableSchema& table, TabletId id, uint64_t limit);
  // Counts the rows and stored bytes of the partition at `position` (at
  // most 10 million rows are visited) in this node's own copy. Errors:
  // NotFound (dropped, or this node stores no copy: the tablet's replicas
  // measure it), IOError, Corruption.
  Result<LargePartition> MeasurePartition(const TableSchema& table, const std::string& position);
  // Called by the CQL layer for a read that visited more than
  // guardrails().tombstone_warn tombstones.
  void RecordTombstoneRead(const TableSchema& table, uint64_t tombstones, uint64_t live_rows);
  std::map<uint32_t, TombstoneReport> TombstoneReports() const;
  // Never null for a table id; created on first use.
  std::shared_ptr<TableMetrics> MetricsOf(uint32_t table_id);

  // --- Maintenance ---
  // Flushes and compacts the whole store to the last level: expires TTL
  // data and purges tombstones past each table's gc_grace_seconds.
  Status Compact();
  // Compacts every range removed by a range delete since the last call
  // (StorageEngine::TakeDeletedRanges): a dropped table's, a moved tablet
  // replica's (migration cleanup). Returns how many; the first error stops it
  // (the ranges not compacted wait for an ordinary compaction). Run by the
  // TabletBalancer thread each round.
  Result<size_t> ReclaimDeletedRanges();
  Status Flush() { return engine_->Flush(); }
  int64_t NowMicros() const { return engine_->NowMicros(); }
  // A server-side write timestamp, microseconds: max(clock, last + 1), so
  // strictly increasing per node (what a mutation without USING TIMESTAMP
  // gets; the coordinator's derived rows take one per write). Thread-safe.
  int64_t NextTimestamp();
  StorageEngine* engine() { return engine_.get(); }

 private:
  Database(std::unique_ptr<StorageEngine> engine, const DatabaseOptions& options);
  Status LoadTablets();
  Status PublishTablets(TabletMap map);  // persists, then swaps the snapshot
  std::atomic<TabletPlacementView*> placement_{nullptr};
  void RefreshVectorIndexes();  // vector_indexes_ follow the catalog
  Status DropTableLocked(const std::string& keyspace, const std::string& name);
  // The median partition of `tablet` (or its middle token), read from this
  // node's copy (NotFound when it stores none; failpoint tablets.median_read
  // before it reads).
  Result<std::string> MiddleOf(const TableSchema& table, const Tablet& tablet);
  // An iterator over [lower, upper) of this node's own copy of `tablet`
  // (the storage engine's); nullptr when this node stores none of it.
  std::unique_ptr<KvIterator> OwnCopyIterator(const TableSchema& table, const Tablet& tablet, std::string lower,
                                              std::string upper);
  Status RemoveTableData(const TableSchema& table);

  std::unique_ptr<StorageEngine> engine_;
  // Fed by engine_'s write observer, which the destructor clears first.
  std::unique_ptr<VectorIndexes> vector_indexes_;
  std::shared_ptr<Replica> local_replica_;
  Catalog catalog_;
  mutable std::mutex tablets_mu_;  // guards tablet_maps_ (pointer swaps only)
  std::map<uint32_t, std::shared_ptr<const TabletMap>> tablet_maps_;
  std::mutex admin_mu_;            // serialises split, merge, create and drop
  // Writes to bucketed and partition-bucketed tables hold it shared from
  // routing to the storage write; ChangeBucketCount and ChangePartitionBuckets
  // hold it exclusively.
  std::shared_mutex bucket_layout_mu_;
  mutable std::mutex events_mu_;
  std::deque<TabletEvent> events_;
  std::deque<RetiredTablet> retired_;  // guarded by events_mu_
  uint64_t retired_sequence_ = 0;      // guarded by events_mu_
  void RetireTablet(uint32_t table_id, const Tablet& tablet, int64_t at_micros);
  std::atomic<int64_t> last_timestamp_{0};
  struct PartitionLoad;  // per-table sketches
  std::shared_ptr<PartitionLoad> LoadOf(uint32_t table_id);
  void CountPartition(uint32_t table_id, std::string_view position, bool write, uint64_t n);
  void CountWrittenPartition(uint32_t table_id, std::string_view position, uint64_t rows, uint64_t bytes);
  // A warning (or, at a fail threshold, InvalidArgument) for a write to a
  // partition measured above the partition guardrail.
  Status CheckPartitionGuardrail(const TableSchema& table, const std::string& position,
                                 std::vector<std::string>* warnings);
  std::mutex load_mu_;
  std::map<uint32_t, std::shared_ptr<PartitionLoad>> load_;
  const Guardrails guardrails_;
  const BalancerOptions balancer_options_;
  Failpoints* const failpoints_;  // may be null
  const bool defer_balancer_;
  LargePartitionTracker large_partitions_;
  mutable std::mutex reports_mu_;
  std::map<uint32_t, TombstoneReport> tombstone_reports_;
  std::map<uint32_t, std::shared_ptr<TableMetrics>> metrics_;
  std::unique_ptr<Sequences> sequences_;
  std::unique_ptr<TabletBalancer> balancer_;  // last: stopped first
};

}  // namespace tessera
