// StorageEngine: the node's one RocksDB instance.
//
// Column families: "default" holds table data under storage keys
// (keys/storage_key.h) with reconciling merge operands as values; "meta" holds
// the catalog and tablet maps (small JSON documents). RocksDB types stay out
// of this header so that upper layers include only this light interface.
//
// Merge-operand chains: every write is a merge operand (merge_operator.h),
// so a row updated again and again collects a chain of operands that every
// read of it folds until a flush or compaction does. `max_successive_merges`
// bounds the chain in the memtable: the write that would add one more operand
// reads the key and stores the folded whole value instead (RocksDB's option of
// the name), so a read of the hottest row folds at most that many operands
// from memtables. The meta column family is rarely written, and its memtable
// would keep every write-ahead log alive since its last write: the logs are
// bounded by `max_total_wal_bytes`, past which RocksDB flushes the column
// families holding the oldest log.
//
// Durability (Cassandra's commitlog_sync; issue 32, item 2): every write goes
// to the write-ahead log before it is acknowledged, and survives a process
// crash (SIGKILL). What survives a power loss depends on `commitlog_sync`:
//  - kPeriodic (the default, as Cassandra): acknowledged at once; the log is
//    fsynced every commitlog_sync_period_micros (10 s), so a power loss
//    loses at most the writes of the last period.
//  - kBatch: a write is acknowledged only after the fsync of the log that
//    holds it (RocksDB's sync writes: concurrent writers share one fsync).
//  - kGroup (Cassandra 4.0): as batch, but a writer first waits for the next
//    group window (commitlog_sync_group_window_micros after the previous
//    release), so that the writers of one window share at most about one
//    fsync. Idle, a write goes at once.
// Synced writes become visible only once synced (RocksDB's sync semantics).
// A writer waiting for an fsync holds its thread (until the request path is
// asynchronous). Every log fsync passes SyncObservingFileSystem
// (wal_file_system.h): counted, and held by the failpoint storage.wal_sync.
//
// Reads beyond memory (issue 32, item 4; RocksDB's tuning guide):
//  - the block cache holds uncompressed data blocks; by default it is sized
//    from the memory this process may use (DefaultBlockCacheBytes: a quarter,
//    as RocksDB's rule of a third to a quarter, leaving the rest to the page
//    cache, which keeps the files' blocks, and to memtables);
//  - bloom filters of 10 bits per key (about 1% false positives) hold both
//    whole keys (point reads: MultiGet of a row and its partition header) and
//    the first kPartitionPrefixBytes of each key: table id + token, i.e. the
//    partition, on hash tables (the default); a partition-key prefix on range
//    tables. An iterator whose bounds share that prefix (a partition slice)
//    skips the files without the partition; any wider one seeks in total
//    order, so results never depend on the filter;
//  - index and filter blocks stay pinned in memory for the life of each
//    table file (loaded when the file opens, outside the block cache: about
//    1% of the data, so they are never evicted by the data blocks of a large
//    scan, which cost a point read ~2 ms when they were in the cache);
//  - RocksDB's ticker statistics (no timers) feed the cache and filter hit
//    counts of Stats().
// Settings() reports the values in effect (system_views.settings).
//
// Thread safety: all methods are thread-safe. Iterators are not.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "storage/table_registry.h"

namespace rocksdb {
class FileSystem;
}

namespace tessera {

class Failpoints;

// The key prefix the bloom filters also hold: table id (4) + token (8). FROZEN
// ON DISK (the name of the prefix extractor, rocksdb.CappedPrefix.12, is in
// every table file; another length leaves old files' prefix filters unused).
constexpr size_t kPartitionPrefixBytes = 12;

// The block cache for a process that may use `memory_bytes`: a quarter, at
// least 64 MiB (also when memory_bytes is 0, unknown).
size_t DefaultBlockCacheBytes(uint64_t memory_bytes);

enum class CommitlogSync { kPeriodic, kBatch, kGroup };
// "periodic", "batch" or "group" (the config values). Errors: InvalidArgument naming them.
Result<CommitlogSync> ParseCommitlogSync(std::string_view text);
const char* CommitlogSyncName(CommitlogSync mode);

struct StorageOptions {
  std::string path;                                // directory; created if missing
  CommitlogSync commitlog_sync = CommitlogSync::kPeriodic;  // see "Durability" above
  int64_t commitlog_sync_period_micros = 10'000'000;        // kPeriodic: fsync every this long
  int64_t commitlog_sync_group_window_micros = 15'000;      // kGroup: at most one release per window
  Failpoints* failpoints = nullptr;                         // storage.wal_sync; may be null
  // The file system under RocksDB; null: the machine's. Tests pass a
  // PowerLossFileSystem (wal_file_system.h).
  std::shared_ptr<rocksdb::FileSystem> file_system;
  // Shared LRU block cache, bytes; 0: DefaultBlockCacheBytes(MachineMemoryBytes()).
  size_t block_cache_bytes = 0;
  int bloom_bits_per_key = 10;                     // whole-key and prefix bloom filters
  size_t write_buffer_bytes = 64u << 20;           // memtable size
  // Operands of one key in a memtable before a write folds them (see above);
  // 0 leaves chains unbounded. Measured in bench/RESULTS.md (issue 32).
  size_t max_successive_merges = 16;
  // Bound on the live write-ahead logs, bytes; 0 = 4 x the memtables (RocksDB's default).
  uint64_t max_total_wal_bytes = 256u << 20;
  // Current time in microseconds since the epoch (TTL expiry, tombstone purge).
  std::function<int64_t()> clock_micros;           // default: system clock
};

// An atomic group of writes to the data column family. Encodable, so that a
// replication layer can ship it as is.
class WriteSet {
 public:
  void Merge(std::string key, std::string operand) {
    bytes_ += key.size() + operand.size();
    ops_.push_back({Op::kMerge, std::move(key), std::move(operand)});
  }
  // Removes every key in [begin, end).
  void DeleteRange(std::string begin, std::string end) {
    ops_.push_back({Op::kDeleteRange, std::move(begin), std::move(end)});
  }
  size_t bytes() const { return bytes_; }  // key + value bytes of merges
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }

  struct Op {
    enum Kind { kMerge, kDeleteRange } kind;
    std::string key;
    std::string value;  // operand, or the end key of a range delete
  };
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
  size_t bytes_ = 0;
};

// A forward/backward cursor over a key range of the data column family, on
// an implicit snapshot taken when it was created.
class KvIterator {
 public:
  virtual ~KvIterator() = default;
  virtual void Seek(std::string_view target) = 0;          // first key >= target
  virtual void SeekForPrev(std::string_view target) = 0;   // last key <= target
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  virtual bool Valid() const = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual std::string_view key() const = 0;    // REQUIRES: Valid()
  virtual std::string_view value() const = 0;  // REQUIRES: Valid()
  virtual Status status() const = 0;           // IOError / Corruption after a failed step
};

// What /metrics shows of the engine (server/metrics_text.h). Bytes unless named.
struct StorageStats {
  uint64_t pending_compaction_bytes = 0;  // compaction debt: RocksDB's estimate of bytes to rewrite
  uint64_t running_compactions = 0;
  uint64_t level0_files = 0;
  uint64_t memtable_bytes = 0;            // active and immutable memtables, data column family
  uint64_t immutable_memtables = 0;       // waiting for a flush
  uint64_t wal_files = 0;                 // live write-ahead logs
  uint64_t wal_bytes = 0;
  uint64_t wal_syncs = 0;                 // fsyncs of the write-ahead logs since the engine opened
  const char* commitlog_sync = "periodic";
  uint64_t full_merges = 0;               // see MergeOperandStats
  uint64_t merge_operands = 0;
  std::vector<uint64_t> full_merges_by_operands;  // MergeOperandStats::kBuckets counts, not cumulative
  // Block cache: capacity and use, bytes; lookups since the engine opened, by block kind.
  uint64_t block_cache_capacity_bytes = 0;
  uint64_t block_cache_usage_bytes = 0;
  uint64_t block_cache_data_hits = 0, block_cache_data_misses = 0;
  uint64_t block_cache_index_hits = 0, block_cache_index_misses = 0;
  uint64_t block_cache_filter_hits = 0, block_cache_filter_misses = 0;
  // Bloom filters since the engine opened: whole-key probes a filter answered
  // "absent" (useful: a file not read), "maybe" (positive) and "maybe" that
  // were true; prefix probes of partition-slice iterators and their "absent"s.
  uint64_t bloom_useful = 0, bloom_positive = 0, bloom_true_positive = 0;
  uint64_t prefix_checked = 0, prefix_useful = 0;
};

class StorageEngine {
 public:
  // Errors: IOError when RocksDB cannot open the directory.
  static Result<std::unique_ptr<StorageEngine>> Open(const StorageOptions& options);
  ~StorageEngine();
  StorageEngine(const StorageEngine&) = delete;
  StorageEngine& operator=(const StorageEngine&) = delete;

  // The storage settings in effect, as (name, value) texts in name order:
  // the commit-log mode and its period or window, block cache bytes, filter
  // bits per key and prefix, where index and filter blocks live, memtable
  // bytes, merge bound, log bound. For system_views.settings.
  std::vector<std::pair<std::string, std::string>> Settings() const;

  // Applies every op of `writes` atomically, or none. Errors: InvalidArgument
  // for a range deletion whose end sorts before its start (nothing applied),
  // IOError from RocksDB.
  [[nodiscard]] Status Write(const WriteSet& writes);
  // Called after every successful Write with its writes, on the writing
  // thread: what keeps a structure beside the data in step with it (db's
  // vector indexes). REQUIRES: set before the engine serves writes, and
  // cleared (nullptr) before whatever it calls goes away; the observer is
  // thread-safe and may read the engine, but not Write to it.
  using WriteObserver = std::function<void(const WriteSet&)>;
  void SetWriteObserver(WriteObserver observer) { write_observer_ = std::move(observer); }
  // NotFound when the key has no value.
  Status Get(std::string_view key, std::string* value);
  // Looks up several keys on one snapshot: statuses[i] is OK (values[i]
  // set) or NotFound. Cheaper than separate Gets (batched lookups).
  void MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                std::vector<Status>* statuses);
  // Iterates keys in [lower, upper); an empty `upper` means no upper bound.
  std::unique_ptr<KvIterator> NewIterator(std::string lower, std::string upper);

  // Approximate on-disk (plus, with `include_memtables`, memtable) bytes of [begin, end).
  uint64_t ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables = true);
  // Flushes memtables and compacts [begin, end) (empty = whole key space)
  // down to the last level.
  Status Compact(std::string_view begin = {}, std::string_view end = {});
  // The [begin, end) ranges that Write removed with DeleteRange since the
  // last call, oldest first: a range delete hides the data, but its bytes
  // stay (and count in ApproximateSize) until a compaction reaches them, so
  // the owner compacts these (Database::ReclaimDeletedRanges). At most
  // kMaxDeletedRanges are kept; later ones wait for an ordinary compaction.
  // Thread-safe.
  static constexpr size_t kMaxDeletedRanges = 1024;
  std::vector<std::pair<std::string, std::string>> TakeDeletedRanges();
  Status Flush();
  // A RocksDB property of the data column family (e.g. "rocksdb.estimate-num-keys").
  uint64_t IntProperty(const std::string& name);
  // Compaction debt, memtables, logs and merge-operand counts (lists the log directory).
  StorageStats Stats();

  // The meta column family: small documents, synced on write.
  Status MetaPut(std::string_view key, std::string_view value);
  // The same, durable as a data write (commitlog_sync: in the log at once,
  // fsynced by the period, or before the return in batch and group modes):
  // for state written on every request, such as the replicas' Paxos state.
  Status MetaPutAsData(std::string_view key, std::string_view value);
  Status MetaDelete(std::string_view key);
  Status MetaGet(std::string_view key, std::string* value);
  // All (key, value) pairs whose key starts with `prefix`, in key order.
  Result<std::vector<std::pair<std::string, std::string>>> MetaScan(std::string_view prefix);

  TableRegistry& registry() { return registry_; }
  int64_t NowMicros() const { return clock_(); }

 private:
  struct Impl;
  explicit StorageEngine(std::function<int64_t()> clock);
  TableRegistry registry_;  // before impl_: the compaction filter points at it
  std::function<int64_t()> clock_;
  WriteObserver write_observer_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
