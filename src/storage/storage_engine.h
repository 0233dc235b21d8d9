// StorageEngine: the node's one RocksDB instance.
//
// Column families: "default" holds table data under storage keys
// (keys/storage_key.h) with reconciling merge operands as values; "meta" holds
// the catalog and tablet maps (small JSON documents). RocksDB types stay out
// of this header so that upper layers include only this light interface.
//
// Durability: every write goes to the WAL before it is acknowledged. With
// sync_writes=false (default) an acknowledged write survives a process crash
// (SIGKILL) but not a machine crash; with sync_writes=true each write is
// fsync'ed and survives both.
//
// Thread safety: all methods are thread-safe. Iterators are not.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "storage/table_registry.h"

namespace tessera {

struct StorageOptions {
  std::string path;                                // directory; created if missing
  bool sync_writes = false;                        // fsync the WAL on every write
  size_t block_cache_bytes = 256u << 20;           // shared LRU block cache
  size_t write_buffer_bytes = 64u << 20;           // memtable size
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

class StorageEngine {
 public:
  // Errors: IOError when RocksDB cannot open the directory.
  static Result<std::unique_ptr<StorageEngine>> Open(const StorageOptions& options);
  ~StorageEngine();
  StorageEngine(const StorageEngine&) = delete;
  StorageEngine& operator=(const StorageEngine&) = delete;

  Status Write(const WriteSet& writes);
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

  // The meta column family: small documents, synced on write.
  Status MetaPut(std::string_view key, std::string_view value);
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
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
