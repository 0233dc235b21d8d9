// TableRegistry: the schemas the storage layer needs without the catalog
// (the compaction filter finds a key's table, its gc_grace_seconds and key
// layout by the table id in the key's first 4 bytes), and the key ranges
// whose tombstones must outlive gc_grace for now (purge holds: a tablet on
// the move, whose tombstones must reach its new replica before any
// compaction may drop them; issue 11, "tombstones held").
//
// Thread safety: all methods are thread-safe. Find returns an immutable
// snapshot that stays valid after Remove. PurgeHeld is lock-free while no
// range is held (the compaction filter asks it for every key).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "types/schema.h"

namespace tessera {

class TableRegistry {
 public:
  void Put(std::shared_ptr<const TableSchema> table) {
    std::lock_guard<std::mutex> lock(mu_);
    tables_[table->id] = std::move(table);
  }
  void Remove(uint32_t table_id) {
    std::lock_guard<std::mutex> lock(mu_);
    tables_.erase(table_id);
  }
  // Replaces the ranges of table `table_id` that `owner` (e.g. "migration")
  // holds: storage keys [first, second), absolute. An empty list releases them.
  void SetPurgeHolds(const std::string& owner, uint32_t table_id,
                     std::vector<std::pair<std::string, std::string>> ranges) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& held = holds_[{owner, table_id}];
    held = std::move(ranges);
    if (held.empty()) holds_.erase({owner, table_id});
    size_t n = 0;
    for (const auto& [who, r] : holds_) n += r.size();
    held_ranges_.store(n, std::memory_order_release);
  }
  // Whether storage key `key` lies in a held range: its tombstones are kept
  // whatever their age.
  bool PurgeHeld(std::string_view key) const {
    if (held_ranges_.load(std::memory_order_acquire) == 0) return false;
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [who, ranges] : holds_) {
      for (const auto& [start, end] : ranges) {
        if (start <= key && key < end) return true;
      }
    }
    return false;
  }
  size_t held_ranges() const { return held_ranges_.load(std::memory_order_acquire); }

  // nullptr when the id is unknown.
  std::shared_ptr<const TableSchema> Find(uint32_t table_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tables_.find(table_id);
    return it == tables_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, std::shared_ptr<const TableSchema>> tables_;
  std::map<std::pair<std::string, uint32_t>, std::vector<std::pair<std::string, std::string>>> holds_;
  std::atomic<size_t> held_ranges_{0};
};

}  // namespace tessera
