// tessera::Database — the embedded single-node API every front door uses.
//
// Schema: keyspaces and tables (Catalog), persisted. Data: Apply() routes a
// Mutation to the tablet that owns its partition and through that tablet's
// Replica; reads go through the same routing (reader.h). Tablets: list with
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

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/catalog.h"
#include "db/mutation.h"
#include "db/reader.h"
#include "storage/storage_engine.h"
#include "tablets/tablet_map.h"

namespace tessera {

struct DatabaseOptions {
  std::string data_dir;                      // created if missing
  bool sync_writes = false;                  // see StorageEngine durability
  size_t block_cache_bytes = 256u << 20;
  std::function<int64_t()> clock_micros;     // default: system clock (tests inject one)
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
  double reads_per_second = 0, writes_per_second = 0, read_bytes_per_second = 0, write_bytes_per_second = 0;
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
  // Creates the table and its initial tablets; see Catalog::CreateTable.
  Result<std::shared_ptr<const TableSchema>> CreateTable(TableSchema table, bool if_not_exists = false);
  Result<std::shared_ptr<const TableSchema>> AlterTable(TableSchema table);
  Status DropTable(const std::string& keyspace, const std::string& name, bool if_exists = false);
  // Removes every row, keeps schema and tablets.
  Status TruncateTable(const std::string& keyspace, const std::string& name);
  Result<std::shared_ptr<const TableSchema>> GetTable(const std::string& keyspace, const std::string& name) const;
  const Catalog& catalog() const { return catalog_; }

  // --- Data ---
  // Errors: InvalidArgument (see BuildWriteSet), NotFound (table dropped), IOError.
  Status Apply(const Mutation& mutation);
  // All mutations in one atomic write (a logged batch).
  Status ApplyBatch(const std::vector<Mutation>& mutations);
  Result<std::optional<RowResult>> ReadRow(const std::shared_ptr<const TableSchema>& table,
                                           const std::vector<std::string>& partition_key,
                                           const std::vector<std::string>& clustering);
  Result<SliceResult> ReadSlice(const std::shared_ptr<const TableSchema>& table,
                                const std::vector<std::string>& partition_key, const SliceRequest& request);
  Result<RangeResult> ScanRange(const std::shared_ptr<const TableSchema>& table, const RangeRequest& request);

  // --- Tablets ---
  std::vector<TabletStatus> Tablets(const TableSchema& table);
  // Splits a tablet at `split_position` (a partition position or token
  // prefix, see keys/storage_key.h), or, when absent, at its middle: the
  // middle token for hash tables, the median partition for range tables.
  // Returns the two new tablet ids. Errors: NotFound, InvalidArgument (a
  // tablet holding a single partition: a partition is never split).
  Result<std::pair<TabletId, TabletId>> SplitTablet(const TableSchema& table, TabletId tablet,
                                                    std::optional<std::string> split_position = std::nullopt,
                                                    const std::string& reason = "manual");
  Result<TabletId> MergeTablets(const TableSchema& table, TabletId left, const std::string& reason = "manual");
  std::vector<TabletEvent> TabletEvents() const;
  // The `n` partitions with the most row writes (or point and slice reads)
  // since the table was opened, and the total the shares refer to.
  std::vector<HotPartition> HotPartitions(const TableSchema& table, bool writes, size_t n, uint64_t* total);

  // --- Maintenance ---
  // Flushes and compacts the whole store to the last level: expires TTL
  // data and purges tombstones past each table's gc_grace_seconds.
  Status Compact();
  Status Flush() { return engine_->Flush(); }
  int64_t NowMicros() const { return engine_->NowMicros(); }
  StorageEngine* engine() { return engine_.get(); }

 private:
  explicit Database(std::unique_ptr<StorageEngine> engine);
  Status LoadTablets();
  std::shared_ptr<const TabletMap> TabletsOf(uint32_t table_id) const;
  Status PublishTablets(TabletMap map);  // persists, then swaps the snapshot
  ReadContext MakeReadContext(const std::shared_ptr<const TableSchema>& table);
  int64_t NextTimestamp();
  Result<std::string> MiddleOf(const TableSchema& table, const Tablet& tablet);
  void RecordEvent(TabletEvent e);
  Status RemoveTableData(const TableSchema& table);

  std::unique_ptr<StorageEngine> engine_;
  std::shared_ptr<Replica> local_replica_;
  Catalog catalog_;
  mutable std::mutex tablets_mu_;  // guards tablet_maps_ (pointer swaps only)
  std::map<uint32_t, std::shared_ptr<const TabletMap>> tablet_maps_;
  std::mutex admin_mu_;            // serialises split, merge, create and drop
  mutable std::mutex events_mu_;
  std::deque<TabletEvent> events_;
  std::atomic<int64_t> last_timestamp_{0};
  struct PartitionLoad;  // per-table sketches
  std::shared_ptr<PartitionLoad> LoadOf(uint32_t table_id);
  void CountPartition(uint32_t table_id, std::string_view position, bool write, uint64_t n);
  std::mutex load_mu_;
  std::map<uint32_t, std::shared_ptr<PartitionLoad>> load_;
};

}  // namespace tessera
