#include "tablets/key_sample.h"

#include <algorithm>
#include <map>

#include "tablets/load_window.h"

namespace tessera {
namespace {

constexpr int64_t kGenerationMicros = int64_t{LoadWindow::kSeconds} * 1'000'000;

}  // namespace

void KeySample::Rotate(int64_t now) {
  if (current_.start_micros == 0) current_.start_micros = now;
  if (now - current_.start_micros < kGenerationMicros) return;
  if (now - current_.start_micros >= 2 * kGenerationMicros) {
    previous_ = Generation{};
  } else {
    previous_ = std::move(current_);
  }
  current_ = Generation{};
  current_.start_micros = now;
}

void KeySample::Add(int64_t now, std::string_view position, uint64_t weight, bool write) {
  std::lock_guard<std::mutex> lock(mu_);
  Rotate(now);
  Generation& g = current_;
  if (write) {
    ++g.writes;
    // The tail as it was about kTailLag writes ago (everything counts before then).
    const bool near = tail_snapshots_.empty() || position >= tail_snapshots_.front();
    if (greatest_written_.empty() || position > greatest_written_) {
      ++g.advances;
      greatest_written_.assign(position);
    } else if (near) {
      ++g.near_tail;
    }
    constexpr uint32_t kEvery = 16;
    if (++writes_since_snapshot_ == kEvery) {
      writes_since_snapshot_ = 0;
      tail_snapshots_.push_back(greatest_written_);
      if (tail_snapshots_.size() > kTailLag / kEvery) tail_snapshots_.pop_front();
    }
  }
  ++g.seen;
  if (g.reservoir.size() < kCapacity) {
    g.reservoir.emplace_back(std::string(position), weight);
    return;
  }
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  const uint64_t slot = rng_ % g.seen;
  if (slot < kCapacity) g.reservoir[slot] = {std::string(position), weight};
}

void KeySample::InheritFrom(const KeySample& parent, std::string_view start, std::string_view end) {
  std::scoped_lock lock(mu_, parent.mu_);
  const bool tail = !parent.greatest_written_.empty() && start <= parent.greatest_written_ &&
                    parent.greatest_written_ < end;
  auto copy = [&](const Generation& from, Generation* to) {
    to->start_micros = from.start_micros;
    for (const auto& [key, weight] : from.reservoir) {
      if (start <= key && key < end) to->reservoir.emplace_back(key, weight);
    }
    // Keep each kept sample standing for as many accesses as before.
    to->seen = from.reservoir.empty() ? 0 : from.seen * to->reservoir.size() / from.reservoir.size();
    if (tail) {
      to->writes = from.writes;
      to->advances = from.advances;
      to->near_tail = from.near_tail;
    }
  };
  copy(parent.current_, &current_);
  copy(parent.previous_, &previous_);
  if (tail) {
    greatest_written_ = parent.greatest_written_;
    tail_snapshots_ = parent.tail_snapshots_;
  }
}

KeySample::Snapshot KeySample::Take(int64_t now) const {
  std::lock_guard<std::mutex> lock(mu_);
  Snapshot out;
  std::map<std::string, double> merged;
  for (const Generation* g : {&previous_, &current_}) {
    // Generations older than two windows are stale (Rotate has not run since).
    if (g->start_micros == 0 || now - g->start_micros >= 2 * kGenerationMicros) continue;
    out.writes += g->writes;
    out.advances += g->advances;
    out.near_tail += g->near_tail;
    if (g->reservoir.empty()) continue;
    const double scale = static_cast<double>(g->seen) / static_cast<double>(g->reservoir.size());
    for (const auto& [key, weight] : g->reservoir) merged[key] += scale * static_cast<double>(weight);
  }
  out.keys.assign(merged.begin(), merged.end());
  return out;
}

}  // namespace tessera
