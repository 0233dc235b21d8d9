// Key and value generators of YCSB's CoreWorkload (Cooper et al., SoCC
// 2010; brianfrankcooper/YCSB core/.../generator), so that Tessera's
// workloads draw the same key distributions as YCSB's:
//  - Zipfian: Gray et al.'s "Quickly generating billion-record synthetic
//    databases" (SIGMOD 1994), constant 0.99;
//  - ScrambledZipfian: Zipfian over 10^10 items, FNV-hashed into the key
//    range, so the popular keys are scattered (YCSB's "zipfian" choice);
//  - SkewedLatest: Zipfian distance back from the newest inserted key
//    (YCSB's "latest");
//  - Uniform.
// FnvHash64 is YCSB's Utils.fnvhash64 (FNV-1a over 8 bytes, absolute value).
//
// Thread safety: generators are not synchronised; one per thread. The
// shared insert counter (InsertCounter) is atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include <random>

namespace tessera::workload {

int64_t FnvHash64(int64_t value);

class Zipfian {
 public:
  static constexpr double kConstant = 0.99;
  // Items in [min, max]. `zetan` < 0: computed (O(items)).
  Zipfian(int64_t min, int64_t max, double constant = kConstant, double zetan = -1);
  int64_t Next(std::mt19937_64& rng);
  // The same distribution over [min, min + items) for a grown item count.
  int64_t Next(std::mt19937_64& rng, int64_t items);

 private:
  static double Zeta(int64_t n, double theta, int64_t from = 0, double initial = 0);
  int64_t base_, items_;
  double theta_, zeta2theta_, alpha_, zetan_, eta_;
  int64_t counted_items_;
};

class ScrambledZipfian {
 public:
  ScrambledZipfian(int64_t min, int64_t max);
  int64_t Next(std::mt19937_64& rng);

 private:
  int64_t min_, items_;
  Zipfian zipf_;
};

// Keys inserted so far: [0, next); inserts take the next number.
class InsertCounter {
 public:
  explicit InsertCounter(int64_t start) : next_(start) {}
  int64_t Take() { return next_.fetch_add(1, std::memory_order_relaxed); }
  int64_t last() const { return next_.load(std::memory_order_relaxed) - 1; }

 private:
  std::atomic<int64_t> next_;
};

class SkewedLatest {
 public:
  explicit SkewedLatest(const InsertCounter* counter);
  int64_t Next(std::mt19937_64& rng);

 private:
  const InsertCounter* counter_;
  Zipfian zipf_;
};

}  // namespace tessera::workload
