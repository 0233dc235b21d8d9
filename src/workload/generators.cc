#include "workload/generators.h"

#include <cmath>
#include <cstdlib>

namespace tessera::workload {

int64_t FnvHash64(int64_t value) {
  uint64_t hash = 0xCBF29CE484222325ull;
  auto v = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) {
    hash ^= v & 0xff;
    v >>= 8;
    hash *= 1099511628211ull;
  }
  const auto h = static_cast<int64_t>(hash);
  return h == INT64_MIN ? INT64_MAX : std::llabs(h);
}

double Zipfian::Zeta(int64_t n, double theta, int64_t from, double initial) {
  double sum = initial;
  for (int64_t i = from; i < n; ++i) sum += 1.0 / std::pow(static_cast<double>(i + 1), theta);
  return sum;
}

Zipfian::Zipfian(int64_t min, int64_t max, double constant, double zetan)
    : base_(min), items_(max - min + 1), theta_(constant) {
  zeta2theta_ = Zeta(2, theta_);
  alpha_ = 1.0 / (1.0 - theta_);
  zetan_ = zetan >= 0 ? zetan : Zeta(items_, theta_);
  counted_items_ = items_;
  eta_ = (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
}

int64_t Zipfian::Next(std::mt19937_64& rng) { return Next(rng, items_); }

int64_t Zipfian::Next(std::mt19937_64& rng, int64_t items) {
  if (items > counted_items_) {  // grown: extend zeta incrementally, as YCSB does
    zetan_ = Zeta(items, theta_, counted_items_, zetan_);
    counted_items_ = items;
    eta_ = (1 - std::pow(2.0 / static_cast<double>(items), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
  }
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double u = uniform(rng);
  const double uz = u * zetan_;
  if (uz < 1.0) return base_;
  if (uz < 1.0 + std::pow(0.5, theta_)) return base_ + 1;
  return base_ + static_cast<int64_t>(static_cast<double>(items) * std::pow(eta_ * u - eta_ + 1, alpha_));
}

// YCSB's ScrambledZipfianGenerator: ITEM_COUNT = 10^10 with its precomputed zeta.
ScrambledZipfian::ScrambledZipfian(int64_t min, int64_t max)
    : min_(min), items_(max - min + 1), zipf_(0, 10'000'000'000LL, Zipfian::kConstant, 26.46902820178302) {}

int64_t ScrambledZipfian::Next(std::mt19937_64& rng) { return min_ + FnvHash64(zipf_.Next(rng)) % items_; }

SkewedLatest::SkewedLatest(const InsertCounter* counter)
    : counter_(counter), zipf_(0, std::max<int64_t>(1, counter->last())) {}

int64_t SkewedLatest::Next(std::mt19937_64& rng) {
  const int64_t max = counter_->last();
  const int64_t back = zipf_.Next(rng, std::max<int64_t>(1, max));
  return std::max<int64_t>(0, max - back);
}

}  // namespace tessera::workload
