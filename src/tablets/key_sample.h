// KeySample: which partitions of one tablet were accessed recently, and
// whether its writes only ever go past the last key written — the inputs of
// a load-based split (where to cut) and of tail-hotspot detection (whether
// any cut would help).
//
// Sampling: reservoir sampling (Vitter's Algorithm R) of accesses, each
// carrying its weight in rows, over two generations of LoadWindow::kSeconds
// each, so the sample follows the recent load and forgets the old. Memory:
// at most 2 * kCapacity + kTailLag / 16 partition positions. 256 samples put the load
// median within about 3% of the true one (one standard error).
//
// Append tracking: a write whose partition position is greater than every
// earlier write's *advances* the tail; one that does not, but is at or past
// the greatest position written about kTailLag writes earlier, is *near the
// tail* (a repeat of the tail partition, or a late arrival among concurrent
// requests: a loader with 128 requests in flight reorders neighbours). An
// append-only workload (a monotonic leading key) advances or lands near the
// tail on nearly every write; random keys seldom do.
//
// Thread safety: Add and Take are thread-safe (one mutex per tablet).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

class KeySample {
 public:
  static constexpr size_t kCapacity = 256;
  static constexpr size_t kTailLag = 512;  // writes; kept as 32 snapshots, one per 16 writes

  struct Snapshot {
    // Sampled partition positions with their summed weights (rows), sorted by
    // position, equal positions merged. Weights of the two generations are
    // scaled so that each stands for the accesses it saw.
    std::vector<std::pair<std::string, double>> keys;
    uint64_t writes = 0;    // writes seen in both generations
    uint64_t advances = 0;  // writes past every earlier write
    uint64_t near_tail = 0;  // writes at or past the greatest position of ~kTailLag writes before
  };

  // Counts an access of `weight` rows to the partition at `position`.
  void Add(int64_t now_micros, std::string_view position, uint64_t weight, bool write);
  // Starts a split half from its parent: the sampled keys in [start, end),
  // and the write, advance and repeat counts when the parent's greatest
  // written key falls in the range (that half carries the tail).
  // REQUIRES: this sample is new; `parent` is another sample.
  void InheritFrom(const KeySample& parent, std::string_view start, std::string_view end);
  Snapshot Take(int64_t now_micros) const;

 private:
  struct Generation {
    int64_t start_micros = 0;
    uint64_t seen = 0;  // accesses offered to the reservoir
    std::vector<std::pair<std::string, uint64_t>> reservoir;
    uint64_t writes = 0, advances = 0, near_tail = 0;
  };
  void Rotate(int64_t now_micros);

  mutable std::mutex mu_;
  Generation current_, previous_;
  std::string greatest_written_;
  std::deque<std::string> tail_snapshots_;  // greatest_written_ every 16 writes, oldest first
  uint32_t writes_since_snapshot_ = 0;
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;  // xorshift state
};

}  // namespace tessera
