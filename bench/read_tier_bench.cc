// Inline reads or a storage pool (issue 28 item 1: "storage work runs on a
// bounded pool sized to the cores, or inline where it cannot block (a read
// served from memtables and block cache with read_tier = kBlockCacheTier,
// else the pool); measure which wins"). A benchmark, not a test; results in
// bench/RESULTS.md "Inline reads or a storage pool".
//
// RocksDB alone (the node's store is RocksDB; what is measured is the
// read's hand-off, not Tessera's row decoding): `--rows` (300,000) values
// of 1,000 bytes, flushed and compacted, under a block cache of
// `--cache-mb` (8) MiB, so that most random reads miss the block cache and
// are served from the OS page cache, or, with `--hot`, from 1% of the keys,
// which the block cache holds. One caller thread reads random keys for
// `--seconds` (3) three ways:
//   inline        Get with the default read tier, on the caller's thread
//                 (what a request thread does today);
//   probe + pool  Get with read_tier = kBlockCacheTier; on Incomplete (not
//                 in memtables or block cache) the read is posted to a pool
//                 of 2 threads (the cores) and the caller waits for its
//                 answer, as a request would be resumed from the pool;
//   pool          every read posted to the pool.
// Prints reads/s, the caller's wall time per read, the process's CPU per
// read (getrusage) and the share of probes that missed.
//
// Usage: read_tier_bench [--rows N] [--cache-mb N] [--seconds N] [--hot]
#include <sys/resource.h>
#include <unistd.h>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>

#include <asio.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

std::string Key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "key%016llu", static_cast<unsigned long long>(i));
  return buf;
}

// Runs `read(key)` on a pool thread and waits here for it.
class Pool {
 public:
  Pool() : guard_(asio::make_work_guard(io_)) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~Pool() {
    guard_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  template <typename F>
  void RunAndWait(F&& f) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    asio::post(io_, [&] {
      f();
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
  }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t rows = 300'000;
  size_t cache_mb = 8;
  double seconds = 3;
  bool hot = false;
  for (int i = 1; i < argc; ++i) {
    auto value = [&] { return i + 1 < argc ? argv[++i] : "0"; };
    if (std::strcmp(argv[i], "--rows") == 0) rows = std::strtoull(value(), nullptr, 10);
    else if (std::strcmp(argv[i], "--cache-mb") == 0) cache_mb = std::strtoull(value(), nullptr, 10);
    else if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(value());
    else if (std::strcmp(argv[i], "--hot") == 0) hot = true;
    else {
      std::fprintf(stderr, "usage: read_tier_bench [--rows N] [--cache-mb N] [--seconds N] [--hot]\n");
      return 2;
    }
  }
  if (rows < 100 || seconds <= 0) {
    std::fprintf(stderr, "read_tier_bench: --rows >= 100 and --seconds > 0\n");
    return 2;
  }
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_read_tier_bench." + std::to_string(getpid()));
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(cache_mb << 20);
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* raw = nullptr;
  if (auto s = rocksdb::DB::Open(options, dir.string(), &raw); !s.ok()) {
    std::fprintf(stderr, "read_tier_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  const std::string value(1000, 'v');
  for (uint64_t i = 0; i < rows; ++i) {
    if (auto s = db->Put(rocksdb::WriteOptions(), Key(i), value); !s.ok()) {
      std::fprintf(stderr, "read_tier_bench: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  (void)db->Flush(rocksdb::FlushOptions());
  (void)db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr);

  const uint64_t span = hot ? std::max<uint64_t>(rows / 100, 1) : rows;
  std::mt19937_64 rng(42);
  Pool pool;
  std::printf("| way (%s, %llu rows of 1,000 bytes, %zu MiB block cache) | reads/s | wall per read | CPU per read | probes missed |\n",
              hot ? "1% of the keys" : "all keys", static_cast<unsigned long long>(rows), cache_mb);
  std::printf("|---|---|---|---|---|\n");
  for (const char* way : {"inline", "probe + pool", "pool", "inline"}) {
    uint64_t reads = 0, missed = 0, failed = 0;
    std::string out;
    const double cpu0 = CpuSeconds();
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < deadline) {
      for (int batch = 0; batch < 64; ++batch, ++reads) {
        const std::string key = Key(rng() % span);
        auto read_all = [&] {
          if (!db->Get(rocksdb::ReadOptions(), key, &out).ok()) ++failed;
        };
        if (std::strcmp(way, "inline") == 0) {
          read_all();
        } else if (std::strcmp(way, "pool") == 0) {
          pool.RunAndWait(read_all);
        } else {
          rocksdb::ReadOptions cached;
          cached.read_tier = rocksdb::kBlockCacheTier;
          rocksdb::Status s = db->Get(cached, key, &out);
          if (s.IsIncomplete()) {
            ++missed;
            pool.RunAndWait(read_all);
          } else if (!s.ok()) {
            ++failed;
          }
        }
      }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu = CpuSeconds() - cpu0;
    std::printf("| %s | %.0f | %.1f us | %.1f us | %.0f%% |\n", way, static_cast<double>(reads) / elapsed,
                elapsed * 1e6 / static_cast<double>(reads), cpu * 1e6 / static_cast<double>(reads),
                100.0 * static_cast<double>(missed) / static_cast<double>(reads));
    if (failed > 0) std::fprintf(stderr, "read_tier_bench: %llu reads failed\n", static_cast<unsigned long long>(failed));
  }
  db.reset();
  std::filesystem::remove_all(dir);
  return 0;
}
