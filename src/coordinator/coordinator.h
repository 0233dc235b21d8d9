// tessera::Coordinator — the node's coordinator of writes, above the
// replica-local store (ScyllaDB's storage_proxy role; ../DESIGN.md "Request
// path"): every write the CQL layer makes goes through it, with the request's
// consistency level passed in, and it keeps the secondary indexes and
// materialized views of the written tables right. It also owns their
// background builds, which are coordinator work: a build reads the base
// table and writes the derived rows through the same path.
//
// What is still below it: routing a write or a read to its tablets and their
// replicas (Database::ApplyBatch, ReadRow, ReadSlice, ScanRange, through the
// cluster's ReplicaResolver). Index and view maintenance call those, so they
// see a cluster node's replicated tablets exactly as before.
//
// Derived rows (db/secondary_index.h, db/materialized_view.h): a write to a
// table with secondary indexes or views (as the catalog has it now, whatever
// schema the mutations carry) reads the rows it touches before and after, at
// the write's consistency level, under a lock per partition stripe (so two
// writes of one partition on this node take turns), and writes the
// difference to the backing tables and views, not atomically with the base
// write, at one fresh timestamp (Database::NextTimestamp) so the derived rows
// follow the order of the base writes whatever USING TIMESTAMP said.
//
// Thread safety: every method is thread-safe. Background work: the builds'
// threads, stopped by Stop() (and the destructor).
#pragma once

#include <array>
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

  // --- Writes ---
  // As Database::Apply / ApplyBatch (errors, warnings, consistency), with the
  // derived rows kept right (above).
  [[nodiscard]] Status Apply(const Mutation& mutation, const RequestConsistency& consistency = kLocalConsistency);
  [[nodiscard]] Status ApplyBatch(const std::vector<Mutation>& mutations,
                                  std::vector<std::string>* warnings = nullptr,
                                  const RequestConsistency& consistency = kLocalConsistency);
  // As Database::ApplyBatchAsync: `done` runs exactly once, on the thread of
  // the replica answer that completes the level when AppliesWithoutWaiting;
  // otherwise (derived rows to keep, and Database's own cases) on this thread
  // after the write ran as ApplyBatch.
  void ApplyBatchAsync(const std::vector<Mutation>& mutations, const RequestConsistency& consistency,
                       Database::WriteDone done);
  // False when ApplyBatchAsync runs `mutations` on the calling thread, which
  // may then wait for other nodes.
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

 private:
  struct IndexedWrite {
    const Mutation* mutation;
    std::shared_ptr<const TableSchema> table;  // the catalog's current schema
  };
  using IndexEntrySets = std::map<std::pair<uint32_t, std::string>, std::vector<IndexEntry>>;
  using ViewRowSets = std::map<std::pair<uint32_t, std::string>, std::vector<ViewRow>>;  // (base id, view) -> rows

  // The mutations whose tables have derived rows (empty: none).
  std::vector<IndexedWrite> WritesWithDerivedRows(const std::vector<Mutation>& mutations) const;
  void RefreshDerivedFlag();
  // --- maintenance (coordinator/index_maintenance.cc, view_maintenance.cc) ---
  Status ApplyWithDerivedRows(const std::vector<Mutation>& mutations, const std::vector<IndexedWrite>& indexed,
                              std::vector<std::string>* warnings, const RequestConsistency& consistency);
  Status CollectDerived(const std::vector<IndexedWrite>& writes, IndexEntrySets* out, ViewRowSets* views,
                        const RequestConsistency& consistency);
  Status WriteIndexChanges(const IndexEntrySets& before, const IndexEntrySets& after,
                           const RequestConsistency& consistency);
  Status ReadWholePartition(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                            const RequestConsistency& consistency, std::optional<RowResult>* static_row,
                            std::vector<RowResult>* rows);
  // The rows `views` (names of views of `base`) have for `rows` of one partition.
  void CollectViewRows(const TableSchema& base, const std::vector<std::string>& views,
                       const std::vector<std::string>& partition_key, const std::vector<RowResult>& rows,
                       ViewRowSets* out) const;
  Status WriteViewChanges(const ViewRowSets& before, const ViewRowSets& after, const RequestConsistency& consistency);
  std::mutex& PartitionStripe(uint32_t table_id, const std::vector<std::string>& pk);

  // --- builds (coordinator/derived_builds.cc) ---
  void StartIndexBuild(const std::string& keyspace, const std::string& table, const std::string& index);
  void BuildIndex(std::stop_token stop, std::string keyspace, std::string table, std::string index);
  void StartViewBuild(const std::string& keyspace, const std::string& base, const std::string& view);
  void BuildView(std::stop_token stop, std::string keyspace, std::string base, std::string view);
  // Calls `partition` for each partition of keyspace.table, a page at a time,
  // each under its stripe lock with the catalog's current schema; stops at
  // the first error, when `partition` sets *more to false, or on `stop`
  // (*stopped set). The builds of indexes and views share it.
  using PartitionVisitor = std::function<Status(const std::shared_ptr<const TableSchema>& table,
                                                const std::vector<std::string>& partition_key, bool* more)>;
  Status ForEachPartitionLocked(const std::stop_token& stop, const std::string& keyspace, const std::string& table,
                                const PartitionVisitor& partition, bool* stopped);

  Database* const db_;
  // Whether any table has a secondary index (other than a vector index) or
  // a view: writes skip the catalog lookups while none has. Set before a
  // CREATE INDEX / VIEW changes the catalog, recomputed after a DROP.
  std::atomic<bool> any_derived_{false};
  std::array<std::mutex, 64> stripes_;
  mutable std::mutex builds_mu_;
  std::set<std::pair<std::string, std::string>> building_indexes_;        // (keyspace, index); builds_mu_
  std::map<std::pair<std::string, std::string>, uint64_t> building_views_;  // (keyspace, view) -> keys built; builds_mu_
  std::vector<std::jthread> builders_;                                     // builds_mu_
  bool stopping_ = false;                                                  // builds_mu_
};

}  // namespace tessera
