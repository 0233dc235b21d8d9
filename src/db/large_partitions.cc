#include "db/large_partitions.h"

#include <algorithm>

namespace tessera {

bool LargePartitionTracker::Approaching(uint64_t rows, uint64_t bytes) const {
  return (guardrails_.partition_rows_warn > 0 && rows * 2 >= guardrails_.partition_rows_warn) ||
         (guardrails_.partition_bytes_warn > 0 && bytes * 2 >= guardrails_.partition_bytes_warn);
}

void LargePartitionTracker::NoteWrite(uint32_t table_id, std::string_view position, uint64_t rows, uint64_t bytes) {
  if (!Approaching(rows, bytes)) return;
  std::lock_guard<std::mutex> lock(mu_);
  Key key{table_id, std::string(position)};
  auto it = next_check_.find(key);
  if (it != next_check_.end() && rows < it->second.first && bytes < it->second.second) return;
  if (it == next_check_.end() && next_check_.size() >= kMaxTracked) return;
  // Measure again after another tenth of the threshold, or of the partition
  // itself once it is far past it, so that a huge partition is not counted
  // over and over.
  next_check_[key] = {rows + std::max(guardrails_.partition_rows_warn, rows) / 10 + 1,
                      bytes + std::max(guardrails_.partition_bytes_warn, bytes) / 10 + 1};
  pending_.push_back(std::move(key));
}

std::vector<std::pair<uint32_t, std::string>> LargePartitionTracker::TakePending() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Key> out;
  out.swap(pending_);
  return out;
}

void LargePartitionTracker::Record(const LargePartition& m) {
  std::lock_guard<std::mutex> lock(mu_);
  Key key{m.table_id, m.position};
  if (Approaching(m.rows, m.bytes)) {
    kept_[key] = m;
  } else {
    kept_.erase(key);
  }
  any_kept_.store(!kept_.empty(), std::memory_order_relaxed);
}

std::optional<LargePartition> LargePartitionTracker::Find(uint32_t table_id, std::string_view position) const {
  if (!any_kept_.load(std::memory_order_relaxed)) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kept_.find(Key{table_id, std::string(position)});
  if (it == kept_.end()) return std::nullopt;
  return it->second;
}

std::vector<LargePartition> LargePartitionTracker::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LargePartition> out;
  for (const auto& [key, m] : kept_) out.push_back(m);
  return out;
}

void LargePartitionTracker::ForgetTable(uint32_t table_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto erase_table = [table_id](auto& m) {
    for (auto it = m.begin(); it != m.end();) it = it->first.first == table_id ? m.erase(it) : std::next(it);
  };
  erase_table(next_check_);
  erase_table(kept_);
  std::erase_if(pending_, [table_id](const Key& k) { return k.first == table_id; });
  any_kept_.store(!kept_.empty(), std::memory_order_relaxed);
}

}  // namespace tessera
