// tessera::Coordinator — the node's coordinator, above the replica-local
// store (ScyllaDB's storage_proxy role; ../DESIGN.md "Request path"): every
// read and write the CQL layer makes goes through it, with the request's
// consistency level passed in.
//
// Two modes, one API. On a single node (no resolver attached) every call goes
// straight to this node's Database (direct calls, no copies). On a cluster
// node the attached ReplicaResolver chooses, per request and tablet, who
// serves it (cluster/replicated_tablet.h: the tablet's replica set at the
// request's consistency level); the coordinator routes reads with db/reader.h
// over a ReadContext whose replica_of is that choice, and writes as
// Database::RouteWrite builds them, one write per replica set. Database
// itself never holds a replica of another node.
//
// It keeps the secondary indexes and materialized views of the written
// tables right and owns their background builds, which are coordinator work:
// a build reads the base table and writes the derived rows through the same
// path.
//
// Derived rows (db/secondary_index.h, db/materialized_view.h): a write to a
// table with secondary indexes or views (as the catalog has it now, whatever
// schema the mutations carry) reads the rows it touches before and after, at
// the write's consistency level, under the lock of each partition it writes
// (coordinator/partition_locks.h: two writes of one partition on this node
// take turns, and none holds a thread while it waits or while its replicas
// answer), and writes the difference to the backing tables and views in one
// write, not atomically with the base write, at one fresh timestamp
// (Database::NextTimestamp) so the derived rows follow the order of the base
// writes whatever USING TIMESTAMP said.
//
// Thread safety: every method is thread-safe. Background work: the builds'
// threads, stopped by Stop() (and the destructor).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "coordinator/partition_locks.h"
#include "db/database.h"

namespace tessera {

class Coordinator {
 public:
  // REQUIRES: `db` outlives this coordinator and every answer it gives.
  explicit Coordinator(Database* db);
  ~Coordinator();  // Stop()
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  Database& database() { return *db_; }
  const Database& database() const { return *db_; }

  // Resumes the index and view builds a stopped node left unfinished (their
  // markers in the store's meta column family). A cluster node calls it once
  // its replica resolver is attached (builds write through the replicas).
  // Errors: IOError. REQUIRES: called at most once, before Stop.
  [[nodiscard]] Status Start();
  // Stops the builds (each resumes at the next Start on this store) and
  // waits for their threads. Idempotent; no build starts afterwards.
  void Stop();

  // --- Replicas ---
  // Lets `resolver` choose who serves each request to a tablet (a cluster
  // node's ClusterReplicaResolver); nullptr: this node's replica for every
  // tablet again (a single node). REQUIRES: `resolver` outlives every
  // request that may still choose through it (a node: until its CQL server
  // stopped and its internode client drained).
  void AttachReplicaResolver(ReplicaResolver* resolver);

  // --- Reads: as Database's (db/reader.h: results, paging, errors) ---
  // On a cluster node a replicated tablet's read asks its replicas at
  // `consistency`; the *Async forms answer through `done` exactly once, on
  // this thread or the one the completing replica answers on, so no thread
  // waits for another node; the blocking forms wait for the *Async ones.
  // REQUIRES: this coordinator and its database outlive every answer.
  Result<std::optional<RowResult>> ReadRow(const std::shared_ptr<const TableSchema>& table,
                                           const std::vector<std::string>& partition_key,
                                           const std::vector<std::string>& clustering,
                                           const RequestConsistency& consistency = kLocalConsistency);
  void ReadRowAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& partition_key,
                    const std::vector<std::string>& clustering, const RequestConsistency& consistency, RowDone done);
  Result<SliceResult> ReadSlice(const std::shared_ptr<const TableSchema>& table,
                                const std::vector<std::string>& partition_key, const SliceRequest& request,
                                const RequestConsistency& consistency = kLocalConsistency);
  void ReadSliceAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& partition_key,
                      const SliceRequest& request, const RequestConsistency& consistency, SliceDone done);
  Result<RangeResult> ScanRange(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request,
                                const RequestConsistency& consistency = kLocalConsistency);
  void ScanRangeAsync(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request,
                      const RequestConsistency& consistency, RangeDone done);
  // Prepares a Paxos round on the replicas of one partition
  // (Replica::BeginPaxos): nullopt on a single node, where the caller
  // serializes conditional statements with a lock. `for_read`: a SERIAL
  // read's round. Errors: those of BeginPaxos, InvalidArgument for a wrong
  // partition key, NotFound for a dropped table.
  Result<std::optional<PaxosRound>> BeginPaxos(const std::shared_ptr<const TableSchema>& table,
                                               const std::vector<std::string>& partition_key,
                                               ConsistencyLevel serial, bool for_read = false);
  // The same, answered through `done` exactly once: on a cluster from the
  // thread of the replica answer that completes the prepare (no thread
  // waits), on a single node at once.
  void BeginPaxosAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& partition_key,
                       ConsistencyLevel serial, bool for_read, Replica::PaxosBegun done);
  // ANN candidates (storage keys) of the tablet starting at `tablet_start`
  // from a node that stores it (Replica::SearchVectors): nullopt when this
  // node stores it. Errors: NotFound (dropped, or the tablet split or merged).
  Result<std::optional<std::vector<std::string>>> SearchVectorsOfTablet(
      const std::shared_ptr<const TableSchema>& table, const std::string& tablet_start, const std::string& index,
      const std::vector<float>& query, size_t k);

  // --- Tablets ---
  // Database::SplitTablet (same errors), but a split without a position on a
  // node that stores no copy of the tablet finds the median partition through
  // the tablet's replicas (at ONE, from the copy that answers first) first:
  // the store reads only its own copy. Blocking: the median read may take
  // seconds on a big tablet held elsewhere.
  Result<std::pair<TabletId, TabletId>> SplitTablet(const TableSchema& table, TabletId tablet,
                                                    std::optional<std::string> split_position,
                                                    const std::string& reason, const TabletChangeSource& source = {});

  // --- Writes ---
  // A write's outcome and its warnings (ApplyBatchAsync).
  using WriteDone = std::function<void(Status, std::vector<std::string> warnings)>;
  // As Database::Apply / ApplyBatch (errors, warnings, consistency), sent to
  // the tablets' replicas, with the derived rows kept right (above).
  [[nodiscard]] Status Apply(const Mutation& mutation, const RequestConsistency& consistency = kLocalConsistency);
  [[nodiscard]] Status ApplyBatch(const std::vector<Mutation>& mutations,
                                  std::vector<std::string>* warnings = nullptr,
                                  const RequestConsistency& consistency = kLocalConsistency);
  // As ApplyBatch, answering through `done` exactly once: when
  // AppliesWithoutWaiting, on the thread of the replica answer that
  // completes the write (with derived rows: its last write's), or of the
  // write before it that released this one's partition locks; otherwise on
  // this thread after the write ran as ApplyBatch.
  void ApplyBatchAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                       WriteDone done);
  // True on a cluster node for writes that hold no thread while they wait:
  // no table whose layout changes online. Counter increments (their leader,
  // then their shards), writes to tables with secondary indexes or views
  // (their reads, locks and writes) and a conditional statement's writes
  // through its Paxos round (its accept and commit rounds; REQUIRES then:
  // consistency.paxos outlives `done`'s call) are among them. False:
  // ApplyBatchAsync runs `mutations` on the calling
  // thread, which may wait for other nodes.
  bool AppliesWithoutWaiting(const std::vector<Mutation>& mutations, const RequestConsistency& consistency) const;

  // --- Secondary indexes and materialized views: DDL and builds ---
  // Database::CreateIndex (same errors), then with `build` the background
  // build of the entries of the rows already there (a cluster node replaying
  // another's CREATE INDEX passes false; a node stopped first resumes it).
  Result<std::shared_ptr<const TableSchema>> CreateIndex(const std::string& keyspace, const std::string& table,
                                                         IndexDef index, bool build);
  // Database::DropIndex (same errors); an unfinished build is forgotten.
  Result<std::shared_ptr<const TableSchema>> DropIndex(const std::string& keyspace, const std::string& name);
  // False while this node's build of the index runs (or waits to resume).
  bool IndexBuilt(const std::string& keyspace, const std::string& name) const;
  // Removes every row of the table, its indexes' and its views' on every
  // replica (at `consistency`: the executor asks for ALL, as Cassandra).
  // Errors: NotFound, a replica's.
  Status TruncateTable(const std::string& keyspace, const std::string& name,
                       const RequestConsistency& consistency = kAllConsistency);
  // Database::CreateView (same errors), then with `build` the view's build.
  Result<std::shared_ptr<const TableSchema>> CreateView(TableSchema view, bool build);
  // Database::DropView (same errors); an unfinished build is forgotten.
  Status DropView(const std::string& keyspace, const std::string& name);
  // A view's build on this node: done, or the base partitions written so far.
  struct ViewBuildState {
    bool built = true;
    uint64_t keys_built = 0;
  };
  ViewBuildState ViewBuild(const std::string& keyspace, const std::string& view) const;

  // The locks of the partitions written with derived rows (what tests see
  // of the writes in flight).
  const PartitionLocks& partition_locks() const { return partition_locks_; }

 private:
  struct IndexedWrite {
    const Mutation* mutation;
    std::shared_ptr<const TableSchema> table;  // the catalog's current schema
  };
  using IndexEntrySets = std::map<std::pair<uint32_t, std::string>, std::vector<IndexEntry>>;
  using ViewRowSets = std::map<std::pair<uint32_t, std::string>, std::vector<ViewRow>>;  // (base id, view) -> rows

  bool replicated() const { return resolver_.load(std::memory_order_acquire) != nullptr; }
  // The resolver's choice for `tablet`, else this node's replica.
  std::shared_ptr<Replica> ReplicaOf(const std::shared_ptr<const TableSchema>& table, const Tablet& tablet) const;
  // A read of `table` (in its current layout) through ReplicaOf.
  ReadContext ContextOf(const std::shared_ptr<const TableSchema>& table, const RequestConsistency& consistency) const;
  // --- writes without derived rows (coordinator/replica_writes.cc) ---
  Status ApplyBase(const std::vector<Mutation>& mutations, std::vector<std::string>* warnings,
                   const RequestConsistency& consistency);
  // REQUIRES: replicated(), and no mutation needs a read or a lock first
  // (AppliesWithoutWaiting).
  void ApplyBaseAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                      WriteDone done);
  // Writes `ws` through the replicas of the tablets its keys fall in: one
  // write per replica set, the first error returned (ApplyToReplicas waits
  // for ApplyToReplicasAsync).
  Status ApplyToReplicas(const WriteSet& ws, const RequestConsistency& consistency);
  void ApplyToReplicasAsync(const WriteSet& ws, const RequestConsistency& consistency,
                            std::function<void(Status)> done);
  // Sends each group's writes to its replica at once; the first error once all answered.
  static void ApplyGroupsAsync(std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>> groups,
                               const RequestConsistency& consistency, std::function<void(Status)> done);
  // The replica every op of `ws` goes to (its tablet's) when they all fall
  // in one tablet; else nullptr and `groups` gets the replica of each tablet
  // they reach with its ops, the conditional write's partition first when
  // there is one.
  Result<std::shared_ptr<Replica>> GroupByReplica(const WriteSet& ws, const RequestConsistency& consistency,
                                                  std::vector<std::pair<std::shared_ptr<Replica>, WriteSet>>* groups);
  // The mutations whose tables have derived rows (empty: none).
  std::vector<IndexedWrite> WritesWithDerivedRows(const std::vector<Mutation>& mutations) const;
  void RefreshDerivedFlag();
  // --- maintenance (coordinator/derived_writes.cc, index_maintenance.cc, view_maintenance.cc) ---
  struct DerivedWrite;  // a write with derived rows, in flight
  // What a written partition holds of the rows a write touches.
  struct TouchedRows {
    std::optional<RowResult> static_row;
    std::vector<RowResult> rows;
  };
  using TouchedDone = std::function<void(Result<TouchedRows>)>;
  using DerivedDone = std::function<void(Status, IndexEntrySets, ViewRowSets)>;
  // The base write of `mutations` with its derived rows (`indexed`): under
  // their partition locks, waited for without a thread (Acquire) or on this
  // thread (Lock).
  void ApplyWithDerivedRowsAsync(const std::vector<Mutation>& mutations, const std::vector<IndexedWrite>& indexed,
                                 const RequestConsistency& consistency, WriteDone done);
  Status ApplyWithDerivedRows(const std::vector<Mutation>& mutations, const std::vector<IndexedWrite>& indexed,
                              std::vector<std::string>* warnings, const RequestConsistency& consistency);
  // A copy of the write for the chain (`indexed` pointing into its mutations).
  static std::shared_ptr<DerivedWrite> MakeDerivedWrite(const std::vector<Mutation>& mutations,
                                                        const std::vector<IndexedWrite>& indexed,
                                                        const RequestConsistency& consistency, WriteDone done);
  // The partition locks of `indexed` (PartitionLocks::KeyOf).
  static std::vector<std::string> LockKeysOf(const std::vector<IndexedWrite>& indexed);
  // Writes `w`'s base rows and their derived rows; answers through w's done,
  // then releases w's locks. REQUIRES: w holds the locks of its partitions.
  void RunDerivedWrite(std::shared_ptr<DerivedWrite> w);
  // Writes without derived rows, answering through `done` (on a single node
  // at once, through ApplyBase).
  void WriteBaseAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                      WriteDone done);
  // The index entries and view rows `writes` touch, read at `consistency`
  // (all partitions at once); answers once, on this thread or a replica
  // answer's.
  void CollectDerivedAsync(const std::vector<IndexedWrite>& writes, const RequestConsistency& consistency,
                           DerivedDone done);
  // Reads the rows `w` touches: the whole partition for partition and range
  // deletions, else its rows (and its static row when an index needs it).
  void ReadTouchedAsync(const IndexedWrite& w, const RequestConsistency& consistency, TouchedDone done);
  void ReadWholePartitionAsync(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                               const RequestConsistency& consistency, TouchedDone done);
  Result<TouchedRows> ReadWholePartition(const std::shared_ptr<const TableSchema>& table,
                                         const std::vector<std::string>& pk, const RequestConsistency& consistency);
  // Whether `w` writes a static row that an index of its table needs.
  static bool NeedsStaticRow(const IndexedWrite& w);
  // Adds the index entries and view rows of `touched` (what `w` reads).
  void AddDerived(const IndexedWrite& w, const TouchedRows& touched, IndexEntrySets* out, ViewRowSets* views) const;
  // The writes that take the index entries from `before` to `after` (every
  // key of `after` also in `before`), appended to `writes`, at one fresh
  // timestamp.
  void IndexChanges(const IndexEntrySets& before, const IndexEntrySets& after, std::vector<Mutation>* writes) const;
  // The rows `views` (names of views of `base`) have for `rows` of one partition.
  void CollectViewRows(const TableSchema& base, const std::vector<std::string>& views,
                       const std::vector<std::string>& partition_key, const std::vector<RowResult>& rows,
                       ViewRowSets* out) const;
  // The view writes from `before` to `after`, appended to `writes`, at one
  // fresh timestamp.
  void ViewChanges(const ViewRowSets& before, const ViewRowSets& after, std::vector<Mutation>* writes) const;

  // --- builds (coordinator/derived_builds.cc) ---
  void StartIndexBuild(const std::string& keyspace, const std::string& table, const std::string& index);
  void BuildIndex(std::stop_token stop, std::string keyspace, std::string table, std::string index);
  void StartViewBuild(const std::string& keyspace, const std::string& base, const std::string& view);
  void BuildView(std::stop_token stop, std::string keyspace, std::string base, std::string view);
  // Calls `partition` for each partition of keyspace.table, a page at a time,
  // each under its partition lock with the catalog's current schema; stops at
  // the first error, when `partition` sets *more to false, or on `stop`
  // (*stopped set). The builds of indexes and views share it.
  using PartitionVisitor = std::function<Status(const std::shared_ptr<const TableSchema>& table,
                                                const std::vector<std::string>& partition_key, bool* more)>;
  Status ForEachPartitionLocked(const std::stop_token& stop, const std::string& keyspace, const std::string& table,
                                const PartitionVisitor& partition, bool* stopped);

  Database* const db_;
  std::atomic<ReplicaResolver*> resolver_{nullptr};
  // Whether any table has a secondary index (other than a vector index) or
  // a view: writes skip the catalog lookups while none has. Set before a
  // CREATE INDEX / VIEW changes the catalog, recomputed after a DROP.
  std::atomic<bool> any_derived_{false};
  // Two writes with derived rows of one partition take turns (and a build's
  // read of it waits for them), without holding a thread.
  PartitionLocks partition_locks_;
  mutable std::mutex builds_mu_;
  std::set<std::pair<std::string, std::string>> building_indexes_;        // (keyspace, index); builds_mu_
  std::map<std::pair<std::string, std::string>, uint64_t> building_views_;  // (keyspace, view) -> keys built; builds_mu_
  std::vector<std::jthread> builders_;                                     // builds_mu_
  bool stopping_ = false;                                                  // builds_mu_
};

}  // namespace tessera
