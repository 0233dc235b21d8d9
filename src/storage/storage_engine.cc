#include "storage/storage_engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/transaction_log.h>

#include "common/machine_memory.h"
#include "common/periodic_task.h"
#include "storage/compaction_filter.h"
#include "storage/merge_operator.h"
#include "storage/wal_file_system.h"

namespace tessera {
namespace {

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound(s.ToString());
  if (s.IsCorruption()) return Status::Corruption(s.ToString());
  if (s.IsBusy() || s.IsTryAgain()) return Status::Busy(s.ToString());
  return Status::IOError(s.ToString());
}

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// "15ms", "2.5ms": a duration as Cassandra's settings table shows one.
std::string MillisText(int64_t micros) {
  std::string text = std::to_string(micros / 1000);
  if (micros % 1000 != 0) {
    std::string fraction = std::to_string(1000 + micros % 1000).substr(1);
    while (fraction.back() == '0') fraction.pop_back();
    text += "." + fraction;
  }
  return text + "ms";
}

class RocksIterator : public KvIterator {
 public:
  RocksIterator(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string lower, std::string upper)
      : lower_(std::move(lower)), upper_(std::move(upper)), lower_slice_(lower_), upper_slice_(upper_) {
    rocksdb::ReadOptions ro;
    if (!lower_.empty()) ro.iterate_lower_bound = &lower_slice_;
    if (!upper_.empty()) ro.iterate_upper_bound = &upper_slice_;
    // Every key in [lower, upper) has the bounds' common prefix when they
    // share one of kPartitionPrefixBytes: then the prefix filters may skip
    // files (an exact answer); otherwise the seek is in total order.
    ro.total_order_seek = !(lower_.size() >= kPartitionPrefixBytes && upper_.size() >= kPartitionPrefixBytes &&
                            lower_.compare(0, kPartitionPrefixBytes, upper_, 0, kPartitionPrefixBytes) == 0);
    it_.reset(db->NewIterator(ro, cf));
  }
  void Seek(std::string_view t) override { it_->Seek(ToSlice(t)); }
  void SeekForPrev(std::string_view t) override { it_->SeekForPrev(ToSlice(t)); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  void SeekToLast() override { it_->SeekToLast(); }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  std::string_view key() const override { return {it_->key().data(), it_->key().size()}; }
  std::string_view value() const override { return {it_->value().data(), it_->value().size()}; }
  Status status() const override { return FromRocks(it_->status()); }

 private:
  std::string lower_, upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

// Group commit's window (CommitlogSync::kGroup): the first writer to arrive
// waits until one window after the previous release, then releases every
// writer that arrived meanwhile; they write with sync together, so RocksDB's
// write group gives them about one fsync.
class GroupCommitWindow {
 public:
  explicit GroupCommitWindow(int64_t window_micros) : window_(window_micros) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t mine = released_ + 1;
    if (leading_) {
      cv_.wait(lock, [&] { return released_ >= mine; });
      return;
    }
    leading_ = true;
    const auto at = last_release_ + window_;
    if (at > std::chrono::steady_clock::now()) {
      lock.unlock();
      std::this_thread::sleep_until(at);
      lock.lock();
    }
    ++released_;
    last_release_ = std::chrono::steady_clock::now();
    leading_ = false;
    cv_.notify_all();
  }

 private:
  const std::chrono::microseconds window_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool leading_ = false;
  uint64_t released_ = 0;
  std::chrono::steady_clock::time_point last_release_{};
};

}  // namespace

size_t DefaultBlockCacheBytes(uint64_t memory_bytes) {
  return static_cast<size_t>(std::max<uint64_t>(memory_bytes / 4, uint64_t{64} << 20));
}

Result<CommitlogSync> ParseCommitlogSync(std::string_view text) {
  if (text == "periodic") return CommitlogSync::kPeriodic;
  if (text == "batch") return CommitlogSync::kBatch;
  if (text == "group") return CommitlogSync::kGroup;
  return Status::InvalidArgument("commitlog_sync takes periodic, batch or group, got '" + std::string(text) + "'");
}

const char* CommitlogSyncName(CommitlogSync mode) {
  switch (mode) {
    case CommitlogSync::kBatch: return "batch";
    case CommitlogSync::kGroup: return "group";
    case CommitlogSync::kPeriodic: break;
  }
  return "periodic";
}

struct StorageEngine::Impl {
  MergeOperandStats merge_stats;  // before db: the merge operator points at it, so it outlives the DB
  std::shared_ptr<SyncObservingFileSystem> file_system;  // before db, as the env over it
  std::unique_ptr<rocksdb::Env> env;
  CommitlogSync commitlog_sync = CommitlogSync::kPeriodic;
  std::unique_ptr<GroupCommitWindow> group_window;  // kGroup only
  PeriodicTask periodic_sync;                        // kPeriodic only
  std::shared_ptr<rocksdb::Statistics> statistics;
  std::shared_ptr<rocksdb::Cache> block_cache;
  std::vector<std::pair<std::string, std::string>> settings;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::ColumnFamilyHandle* data = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::WriteOptions write_options;
  rocksdb::WriteOptions meta_write_options;
  std::mutex deleted_mu;
  std::vector<std::pair<std::string, std::string>> deleted_ranges;  // guarded by deleted_mu
  ~Impl() {
    periodic_sync.Stop();
    if (db) {
      if (data) db->DestroyColumnFamilyHandle(data);
      if (meta) db->DestroyColumnFamilyHandle(meta);
      db->Close().PermitUncheckedError();
    }
  }
};

StorageEngine::StorageEngine(std::function<int64_t()> clock) : clock_(std::move(clock)), impl_(new Impl) {}
StorageEngine::~StorageEngine() = default;

Result<std::unique_ptr<StorageEngine>> StorageEngine::Open(const StorageOptions& options) {
  auto clock = options.clock_micros;
  if (!clock) {
    clock = [] {
      return std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::system_clock::now().time_since_epoch()).count();
    };
  }
  std::unique_ptr<StorageEngine> engine(new StorageEngine(clock));

  Impl& impl = *engine->impl_;
  const size_t cache_bytes =
      options.block_cache_bytes > 0 ? options.block_cache_bytes : DefaultBlockCacheBytes(MachineMemoryBytes());
  rocksdb::BlockBasedTableOptions table;
  impl.block_cache = rocksdb::NewLRUCache(cache_bytes);
  table.block_cache = impl.block_cache;
  // Whole keys and partition prefixes (see the header); cheap misses for
  // partition-header lookups and for partitions absent from a file.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(options.bloom_bits_per_key));
  table.whole_key_filtering = true;
  // Index and filter blocks stay resident in the table readers (RocksDB's
  // default), not in the block cache: in the cache, random reads over data
  // larger than the cache evicted them and every reload re-read and
  // checksummed ~0.5 MB (point reads fell to ~2 ms; bench/RESULTS.md).
  table.cache_index_and_filter_blocks = false;

  rocksdb::ColumnFamilyOptions data_cf;
  data_cf.merge_operator = NewReconcilingMergeOperator(&engine->impl_->merge_stats);
  data_cf.max_successive_merges = options.max_successive_merges;
  auto* registry = &engine->registry_;
  data_cf.compaction_filter_factory = NewGarbageCollectingFilterFactory(
      registry, [clock] { return static_cast<uint32_t>(clock() / 1'000'000); });
  data_cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  data_cf.prefix_extractor.reset(rocksdb::NewCappedPrefixTransform(kPartitionPrefixBytes));
  data_cf.write_buffer_size = options.write_buffer_bytes;
  data_cf.compression = rocksdb::kLZ4Compression;  // every level: cheap to decompress on point reads
  data_cf.level_compaction_dynamic_level_bytes = true;

  rocksdb::ColumnFamilyOptions meta_cf;

  rocksdb::DBOptions db_options;
  impl.statistics = rocksdb::CreateDBStatistics();
  impl.statistics->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);  // counters only: no clock reads
  db_options.statistics = impl.statistics;
  impl.file_system = std::make_shared<SyncObservingFileSystem>(
      options.file_system ? options.file_system : rocksdb::FileSystem::Default(), options.failpoints);
  impl.env = rocksdb::NewCompositeEnv(impl.file_system);
  db_options.env = impl.env.get();
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = 2;
  db_options.bytes_per_sync = 1 << 20;
  db_options.max_total_wal_size = options.max_total_wal_bytes;

  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {{rocksdb::kDefaultColumnFamilyName, data_cf},
                                                      {"meta", meta_cf}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, options.path, cfs, &handles, &raw);
  if (!s.ok()) return Status::IOError("cannot open storage at " + options.path + ": " + s.ToString());
  engine->impl_->db.reset(raw);
  engine->impl_->data = handles[0];
  engine->impl_->meta = handles[1];
  impl.commitlog_sync = options.commitlog_sync;
  impl.settings = {
      {"block_cache_bytes", std::to_string(cache_bytes)},
      {"bloom_filter_bits_per_key", std::to_string(options.bloom_bits_per_key)},
      {"bloom_filter_prefix_bytes", std::to_string(kPartitionPrefixBytes)},
      {"commitlog_sync", CommitlogSyncName(options.commitlog_sync)},
      {"commitlog_sync_group_window",
       options.commitlog_sync == CommitlogSync::kGroup
           ? MillisText(options.commitlog_sync_group_window_micros) : "null"},
      {"commitlog_sync_period",
       options.commitlog_sync == CommitlogSync::kPeriodic
           ? MillisText(options.commitlog_sync_period_micros) : "null"},
      {"index_and_filter_blocks", "pinned in table readers"},
      {"max_successive_merges", std::to_string(options.max_successive_merges)},
      {"max_total_wal_bytes", std::to_string(options.max_total_wal_bytes)},
      {"memtable_bytes", std::to_string(options.write_buffer_bytes)},
  };
  impl.write_options.sync = options.commitlog_sync != CommitlogSync::kPeriodic;
  impl.meta_write_options.sync = true;
  if (options.commitlog_sync == CommitlogSync::kGroup) {
    impl.group_window = std::make_unique<GroupCommitWindow>(options.commitlog_sync_group_window_micros);
  }
  if (options.commitlog_sync == CommitlogSync::kPeriodic && options.commitlog_sync_period_micros > 0) {
    rocksdb::DB* db = impl.db.get();
    // Every period from now (PeriodicTask also runs at once: that first run is skipped).
    // A failed sync shows on the next write.
    impl.periodic_sync.Start(options.commitlog_sync_period_micros, [db, first = true]() mutable {
      if (!std::exchange(first, false)) db->SyncWAL().PermitUncheckedError();
    });
  }
  return engine;
}

std::vector<std::pair<std::string, std::string>> StorageEngine::Settings() const { return impl_->settings; }

Status StorageEngine::Write(const WriteSet& writes) {
  // RocksDB checks a range's order only when it applies the batch to the
  // memtable, after the log write: the ops before it stay applied and the
  // database then refuses every write. So the whole batch is refused here.
  for (const auto& op : writes.ops()) {
    if (op.kind == WriteSet::Op::kDeleteRange && op.value < op.key) {
      return Status::InvalidArgument("a range deletion whose end comes before its start");
    }
  }
  rocksdb::WriteBatch batch;
  for (const auto& op : writes.ops()) {
    rocksdb::Status s = op.kind == WriteSet::Op::kMerge
                            ? batch.Merge(impl_->data, ToSlice(op.key), ToSlice(op.value))
                            : batch.DeleteRange(impl_->data, ToSlice(op.key), ToSlice(op.value));
    if (!s.ok()) return FromRocks(s);
  }
  if (impl_->group_window) impl_->group_window->Wait();
  TESSERA_RETURN_IF_ERROR(FromRocks(impl_->db->Write(impl_->write_options, &batch)));
  for (const auto& op : writes.ops()) {
    if (op.kind != WriteSet::Op::kDeleteRange) continue;
    std::lock_guard<std::mutex> lock(impl_->deleted_mu);
    if (impl_->deleted_ranges.size() < kMaxDeletedRanges) impl_->deleted_ranges.emplace_back(op.key, op.value);
  }
  if (write_observer_) write_observer_(writes);
  return Status::OK();
}

std::vector<std::pair<std::string, std::string>> StorageEngine::TakeDeletedRanges() {
  std::lock_guard<std::mutex> lock(impl_->deleted_mu);
  return std::exchange(impl_->deleted_ranges, {});
}

Status StorageEngine::Get(std::string_view key, std::string* value) {
  return FromRocks(impl_->db->Get(rocksdb::ReadOptions(), impl_->data, ToSlice(key), value));
}

void StorageEngine::MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                             std::vector<Status>* statuses) {
  std::vector<rocksdb::Slice> slices;
  slices.reserve(keys.size());
  for (auto k : keys) slices.push_back(ToSlice(k));
  std::vector<rocksdb::PinnableSlice> pinned(keys.size());
  std::vector<rocksdb::Status> st(keys.size());
  impl_->db->MultiGet(rocksdb::ReadOptions(), impl_->data, keys.size(), slices.data(), pinned.data(), st.data());
  values->resize(keys.size());
  statuses->clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    statuses->push_back(FromRocks(st[i]));
    if (st[i].ok()) (*values)[i].assign(pinned[i].data(), pinned[i].size());
  }
}

std::unique_ptr<KvIterator> StorageEngine::NewIterator(std::string lower, std::string upper) {
  return std::make_unique<RocksIterator>(impl_->db.get(), impl_->data, std::move(lower), std::move(upper));
}

uint64_t StorageEngine::ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables) {
  rocksdb::Range range(ToSlice(begin), ToSlice(end));
  uint64_t size = 0;
  rocksdb::SizeApproximationOptions opts;
  opts.include_memtables = include_memtables;
  opts.include_files = true;
  impl_->db->GetApproximateSizes(opts, impl_->data, &range, 1, &size).PermitUncheckedError();
  return size;
}

Status StorageEngine::Compact(std::string_view begin, std::string_view end) {
  rocksdb::CompactRangeOptions opts;
  opts.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  rocksdb::Slice b = ToSlice(begin), e = ToSlice(end);
  return FromRocks(impl_->db->CompactRange(opts, impl_->data, begin.empty() ? nullptr : &b,
                                           end.empty() ? nullptr : &e));
}

Status StorageEngine::Flush() {
  return FromRocks(impl_->db->Flush(rocksdb::FlushOptions(), impl_->data));
}

uint64_t StorageEngine::IntProperty(const std::string& name) {
  uint64_t v = 0;
  if (impl_->db->GetIntProperty(impl_->data, name, &v)) return v;
  // Some counts are string properties only (rocksdb.num-files-at-level<N>).
  std::string text;
  if (!impl_->db->GetProperty(impl_->data, name, &text)) return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

StorageStats StorageEngine::Stats() {
  StorageStats st;
  st.pending_compaction_bytes = IntProperty("rocksdb.estimate-pending-compaction-bytes");
  st.running_compactions = IntProperty("rocksdb.num-running-compactions");
  st.level0_files = IntProperty("rocksdb.num-files-at-level0");
  st.memtable_bytes = IntProperty("rocksdb.cur-size-all-mem-tables");
  st.immutable_memtables = IntProperty("rocksdb.num-immutable-mem-table");
  rocksdb::VectorLogPtr logs;
  if (impl_->db->GetSortedWalFiles(logs).ok()) {
    for (const auto& log : logs) {
      if (log->Type() != rocksdb::kAliveLogFile) continue;
      ++st.wal_files;
      st.wal_bytes += log->SizeFileBytes();
    }
  }
  st.wal_syncs = impl_->file_system->wal_syncs();
  st.commitlog_sync = CommitlogSyncName(impl_->commitlog_sync);
  const MergeOperandStats& m = impl_->merge_stats;
  st.full_merges = m.full_merges.load(std::memory_order_relaxed);
  st.merge_operands = m.operands.load(std::memory_order_relaxed);
  for (const auto& b : m.by_operands) st.full_merges_by_operands.push_back(b.load(std::memory_order_relaxed));
  st.block_cache_capacity_bytes = impl_->block_cache->GetCapacity();
  st.block_cache_usage_bytes = impl_->block_cache->GetUsage();
  const rocksdb::Statistics& t = *impl_->statistics;
  st.block_cache_data_hits = t.getTickerCount(rocksdb::BLOCK_CACHE_DATA_HIT);
  st.block_cache_data_misses = t.getTickerCount(rocksdb::BLOCK_CACHE_DATA_MISS);
  st.block_cache_index_hits = t.getTickerCount(rocksdb::BLOCK_CACHE_INDEX_HIT);
  st.block_cache_index_misses = t.getTickerCount(rocksdb::BLOCK_CACHE_INDEX_MISS);
  st.block_cache_filter_hits = t.getTickerCount(rocksdb::BLOCK_CACHE_FILTER_HIT);
  st.block_cache_filter_misses = t.getTickerCount(rocksdb::BLOCK_CACHE_FILTER_MISS);
  st.bloom_useful = t.getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
  st.bloom_positive = t.getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE);
  st.bloom_true_positive = t.getTickerCount(rocksdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
  st.prefix_checked = t.getTickerCount(rocksdb::BLOOM_FILTER_PREFIX_CHECKED);
  st.prefix_useful = t.getTickerCount(rocksdb::BLOOM_FILTER_PREFIX_USEFUL);
  return st;
}

Status StorageEngine::MetaPut(std::string_view key, std::string_view value) {
  return FromRocks(impl_->db->Put(impl_->meta_write_options, impl_->meta, ToSlice(key), ToSlice(value)));
}

Status StorageEngine::MetaPutAsData(std::string_view key, std::string_view value) {
  return FromRocks(impl_->db->Put(impl_->write_options, impl_->meta, ToSlice(key), ToSlice(value)));
}

Status StorageEngine::MetaDelete(std::string_view key) {
  return FromRocks(impl_->db->Delete(impl_->meta_write_options, impl_->meta, ToSlice(key)));
}

Status StorageEngine::MetaGet(std::string_view key, std::string* value) {
  return FromRocks(impl_->db->Get(rocksdb::ReadOptions(), impl_->meta, ToSlice(key), value));
}

Result<std::vector<std::pair<std::string, std::string>>> StorageEngine::MetaScan(std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->meta));
  for (it->Seek(ToSlice(prefix)); it->Valid() && it->key().starts_with(ToSlice(prefix)); it->Next()) {
    out.emplace_back(it->key().ToString(), it->value().ToString());
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status()));
  return out;
}

}  // namespace tessera
