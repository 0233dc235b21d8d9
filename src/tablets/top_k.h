// TopK: the Space-Saving heavy-hitter sketch (Metwally, Agrawal, El Abbadi,
// "Efficient Computation of Frequent and Top-k Elements in Data Streams",
// ICDT 2005) — bounded memory top-K by count over a stream of keys.
//
// It keeps at most `capacity` counters. A key not tracked replaces the key
// with the smallest count and inherits that count as its error. Guarantees:
// every key whose true count exceeds total/capacity is tracked, and for a
// tracked key  count - error <= true count <= count.
// Memory: O(capacity) keys and counters; Add is O(log capacity).
//
// Thread safety: not synchronised; callers lock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera {

class TopK {
 public:
  struct Entry {
    std::string key;
    uint64_t count = 0;  // an upper bound of the true count
    uint64_t error = 0;  // count - error is a lower bound
  };

  // REQUIRES: capacity >= 1.
  explicit TopK(size_t capacity) : capacity_(capacity) {}

  // Counts `weight` occurrences of `key`; returns its count afterwards (an
  // upper bound of its true count).
  uint64_t Add(std::string_view key, uint64_t weight = 1);
  // The tracked keys, highest count first (at most `n`).
  std::vector<Entry> Top(size_t n) const;
  uint64_t total() const { return total_; }
  size_t size() const { return counters_.size(); }
  void Clear();

 private:
  struct Counter {
    uint64_t count;
    uint64_t error;
  };
  size_t capacity_;
  uint64_t total_ = 0;
  std::unordered_map<std::string, Counter> counters_;
  std::set<std::pair<uint64_t, std::string>> by_count_;  // (count, key), smallest first
};

}  // namespace tessera
