#include "tablets/top_k.h"

#include <algorithm>

namespace tessera {

uint64_t TopK::Add(std::string_view key_view, uint64_t weight) {
  total_ += weight;
  std::string key(key_view);
  auto it = counters_.find(key);
  if (it != counters_.end()) {
    by_count_.erase({it->second.count, key});
    it->second.count += weight;
    by_count_.insert({it->second.count, key});
    return it->second.count;
  }
  if (counters_.size() < capacity_) {
    counters_[key] = Counter{weight, 0};
    by_count_.insert({weight, key});
    return weight;
  }
  // Replace the smallest counter; the newcomer inherits its count as error.
  auto smallest = by_count_.begin();
  uint64_t min_count = smallest->first;
  counters_.erase(smallest->second);
  by_count_.erase(smallest);
  counters_[key] = Counter{min_count + weight, min_count};
  by_count_.insert({min_count + weight, key});
  return min_count + weight;
}

std::vector<TopK::Entry> TopK::Top(size_t n) const {
  std::vector<Entry> out;
  for (auto it = by_count_.rbegin(); it != by_count_.rend() && out.size() < n; ++it) {
    const Counter& c = counters_.at(it->second);
    out.push_back(Entry{it->second, c.count, c.error});
  }
  return out;
}

void TopK::Clear() {
  counters_.clear();
  by_count_.clear();
  total_ = 0;
}

}  // namespace tessera
