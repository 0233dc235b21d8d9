// TableRegistry: the schemas the storage layer needs without the catalog
// (the compaction filter finds a key's table, its gc_grace_seconds and key
// layout by the table id in the key's first 4 bytes).
//
// Thread safety: all methods are thread-safe. Find returns an immutable
// snapshot that stays valid after Remove.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

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
  // nullptr when the id is unknown.
  std::shared_ptr<const TableSchema> Find(uint32_t table_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tables_.find(table_id);
    return it == tables_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, std::shared_ptr<const TableSchema>> tables_;
};

}  // namespace tessera
