#include "tablets/load_window.h"

namespace tessera {

void LoadWindow::Add(int64_t now_micros, uint64_t n) {
  const int64_t second = now_micros / 1'000'000;
  Bucket& b = buckets_[static_cast<size_t>(second % static_cast<int64_t>(buckets_.size()))];
  int64_t seen = b.second.load(std::memory_order_relaxed);
  if (seen != second) {
    if (seen < second && b.second.compare_exchange_strong(seen, second)) b.count.store(0, std::memory_order_relaxed);
    else if (b.second.load(std::memory_order_relaxed) != second) return;  // a stale event; drop it
  }
  b.count.fetch_add(n, std::memory_order_relaxed);
}

void LoadWindow::InheritFrom(const LoadWindow& other, double share) {
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const int64_t second = other.buckets_[i].second.load(std::memory_order_relaxed);
    if (second == INT64_MIN) continue;
    const auto count = static_cast<uint64_t>(
        static_cast<double>(other.buckets_[i].count.load(std::memory_order_relaxed)) * share + 0.5);
    Bucket& b = buckets_[i];
    const int64_t mine = b.second.load(std::memory_order_relaxed);
    if (mine == second) {
      b.count.fetch_add(count, std::memory_order_relaxed);
    } else if (mine < second) {
      b.second.store(second, std::memory_order_relaxed);
      b.count.store(count, std::memory_order_relaxed);
    }
  }
}

double LoadWindow::Rate(int64_t now_micros, int64_t since_micros) const {
  const int64_t whole = now_micros / 1'000'000 - since_micros / 1'000'000;
  const int64_t seconds = whole < 1 ? 1 : (whole > kSeconds ? kSeconds : whole);
  return Rate(now_micros) * kSeconds / static_cast<double>(seconds);
}

double LoadWindow::Rate(int64_t now_micros) const {
  const int64_t second = now_micros / 1'000'000;
  uint64_t total = 0;
  for (const auto& b : buckets_) {
    int64_t s = b.second.load(std::memory_order_relaxed);
    if (s < second && s >= second - kSeconds) total += b.count.load(std::memory_order_relaxed);
  }
  return static_cast<double>(total) / kSeconds;
}

}  // namespace tessera
