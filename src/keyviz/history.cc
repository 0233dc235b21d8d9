#include "keyviz/history.h"

#include <algorithm>
#include <cassert>

#include "common/bytes.h"

namespace tessera::keyviz {
namespace {

uint64_t Grown(uint64_t now, uint64_t before) { return now >= before ? now - before : 0; }

void Copy(std::string_view from, char* to, size_t capacity, uint8_t* size) {
  const size_t n = std::min(from.size(), capacity);
  std::copy_n(from.data(), n, to);
  *size = static_cast<uint8_t>(n);
}

}  // namespace

KeyVizHistory::KeyVizHistory(KeyVizOptions options) : options_(options) {
  assert(options_.max_columns >= 1 && options_.max_rows >= 1);
  ring_.reserve(options_.max_columns);
}

const KeyVizColumn& KeyVizHistory::column(size_t i) const {
  assert(i < count_);
  return ring_[(head_ + i) % ring_.size()];
}

void KeyVizHistory::Push(KeyVizColumn column) {
  if (ring_.size() < options_.max_columns) {
    ring_.push_back(std::move(column));
    ++count_;
    return;
  }
  ring_[head_] = std::move(column);  // the oldest goes
  head_ = (head_ + 1) % ring_.size();
}

void KeyVizHistory::AddSample(int64_t now_micros, const std::vector<TableCounterSample>& tables) {
  const bool close_column = has_baseline_ && now_micros > last_micros_;
  const double seconds = close_column ? static_cast<double>(now_micros - last_micros_) / 1e6 : 0;
  std::vector<PreviousTablet> tablets_now;
  std::vector<PreviousTable> tables_now;
  std::vector<const TableCounterSample*> ordered;
  std::vector<std::pair<uint32_t, TabletId>> retired_now;
  size_t tablet_count = 0;
  for (const auto& t : tables) {
    ordered.push_back(&t);
    tablet_count += t.tablets.size();
  }
  std::sort(ordered.begin(), ordered.end(), [](auto* a, auto* b) { return a->table_id < b->table_id; });
  tablets_now.reserve(tablet_count);
  tables_now.reserve(ordered.size());

  KeyVizColumn column;
  column.start_micros = last_micros_;
  column.end_micros = now_micros;
  if (close_column) column.rows.reserve(tablet_count);
  for (const TableCounterSample* t : ordered) {
    tables_now.push_back({t->table_id, t->read_ops, t->write_ops, t->latency_sum_micros});
    float latency = 0;
    if (close_column) {
      auto prev = std::lower_bound(previous_tables_.begin(), previous_tables_.end(), t->table_id,
                                   [](const PreviousTable& p, uint32_t id) { return p.table_id < id; });
      const bool known = prev != previous_tables_.end() && prev->table_id == t->table_id;
      const uint64_t ops = Grown(t->read_ops + t->write_ops, known ? prev->read_ops + prev->write_ops : 0);
      const uint64_t sum = Grown(t->latency_sum_micros, known ? prev->latency_sum_micros : 0);
      if (ops > 0) latency = static_cast<float>(static_cast<double>(sum) / static_cast<double>(ops));
    }
    for (const auto& s : t->tablets) {
      tablets_now.push_back({t->table_id, s.tablet, s.reads, s.writes, s.bytes_read, s.bytes_written, false});
    }
    if (!close_column) continue;
    std::vector<Growth> growth;
    growth.reserve(t->tablets.size());
    for (const auto& s : t->tablets) {
      growth.push_back(GrowthOf(t->table_id, s.tablet, s.reads, s.writes, s.bytes_read, s.bytes_written));
    }
    for (const auto& r : t->retired) {
      PassOn(*t, r, GrowthOf(t->table_id, r.tablet, r.reads, r.writes, r.bytes_read, r.bytes_written), &growth);
      retired_now.push_back({t->table_id, r.tablet});
    }
    for (size_t i = 0; i < t->tablets.size(); ++i) {
      const TabletCounterSample& s = t->tablets[i];
      KeyVizRow row;
      row.table_id = t->table_id;
      row.tablet = s.tablet;
      row.reads = static_cast<float>(growth[i].reads / seconds);
      row.writes = static_cast<float>(growth[i].writes / seconds);
      row.bytes = static_cast<float>(growth[i].bytes / seconds);
      row.latency_micros = latency;
      Copy(s.start, row.key.data(), kKeyBytes, &row.key_size);
      row.key_truncated = s.start.size() > kKeyBytes;
      Copy(Utf8Prefix(s.label, kLabelBytes), row.label.data(), kLabelBytes, &row.label_size);  // whole characters
      column.rows.push_back(row);
    }
  }
  // A tablet that vanished without its retirement waits one sample for it.
  std::sort(retired_now.begin(), retired_now.end());
  auto by_id = [](const PreviousTablet& a, const PreviousTablet& b) {
    return std::make_pair(a.table_id, a.tablet) < std::make_pair(b.table_id, b.tablet);
  };
  std::sort(tablets_now.begin(), tablets_now.end(), by_id);
  const size_t live = tablets_now.size();
  for (const auto& p : previous_tablets_) {
    if (p.vanished || std::binary_search(retired_now.begin(), retired_now.end(), std::make_pair(p.table_id, p.tablet))) {
      continue;
    }
    if (std::binary_search(tablets_now.begin(), tablets_now.begin() + static_cast<std::ptrdiff_t>(live), p, by_id)) {
      continue;
    }
    PreviousTablet kept = p;
    kept.vanished = true;
    tablets_now.push_back(kept);
  }
  std::inplace_merge(tablets_now.begin(), tablets_now.begin() + static_cast<std::ptrdiff_t>(live), tablets_now.end(),
                     by_id);
  tablets_now.shrink_to_fit();
  previous_tablets_ = std::move(tablets_now);
  previous_tables_ = std::move(tables_now);
  has_baseline_ = true;
  last_micros_ = now_micros;
  if (!close_column) return;
  column.tables_left_out = CoalesceColdRows(&column.rows, options_.max_rows);
  column.rows.shrink_to_fit();
  Push(std::move(column));
}

KeyVizHistory::Growth KeyVizHistory::GrowthOf(uint32_t table_id, TabletId tablet, uint64_t reads, uint64_t writes,
                                               uint64_t bytes_read, uint64_t bytes_written) const {
  const std::pair<uint32_t, TabletId> id{table_id, tablet};
  auto prev = std::lower_bound(previous_tablets_.begin(), previous_tablets_.end(), id,
                               [](const PreviousTablet& p, const std::pair<uint32_t, TabletId>& x) {
                                 return std::make_pair(p.table_id, p.tablet) < x;
                               });
  const bool known = prev != previous_tablets_.end() && prev->table_id == table_id && prev->tablet == tablet;
  // A tablet not seen before was created since the previous sample: its counters started at zero.
  return {static_cast<double>(Grown(reads, known ? prev->reads : 0)),
          static_cast<double>(Grown(writes, known ? prev->writes : 0)),
          static_cast<double>(Grown(bytes_read, known ? prev->bytes_read : 0) +
                              Grown(bytes_written, known ? prev->bytes_written : 0))};
}

void KeyVizHistory::PassOn(const TableCounterSample& table, const RetiredTabletSample& retired, const Growth& g,
                           std::vector<Growth>* growth) {
  // The current tablets whose range [start, next start) overlaps the retired range.
  std::vector<size_t> heirs;
  for (size_t i = 0; i < table.tablets.size(); ++i) {
    const std::string& start = table.tablets[i].start;
    const std::string* end = i + 1 < table.tablets.size() ? &table.tablets[i + 1].start : nullptr;
    const bool before_retired_end = retired.end.empty() || start < retired.end;
    const bool after_retired_start = end == nullptr || retired.start < *end;
    if (before_retired_end && after_retired_start) heirs.push_back(i);
  }
  if (heirs.empty()) return;
  auto share = [&](double Growth::*field) {
    double sum = 0;
    for (size_t i : heirs) sum += (*growth)[i].*field;
    const double total = g.*field;
    for (size_t i : heirs) {
      (*growth)[i].*field += sum > 0 ? total * ((*growth)[i].*field / sum) : total / static_cast<double>(heirs.size());
    }
  };
  share(&Growth::reads);
  share(&Growth::writes);
  share(&Growth::bytes);
}

size_t KeyVizHistory::MemoryBytes() const {
  size_t bytes = sizeof(*this) + ring_.capacity() * sizeof(KeyVizColumn);
  for (const auto& c : ring_) bytes += c.rows.capacity() * sizeof(KeyVizRow);
  bytes += previous_tablets_.capacity() * sizeof(PreviousTablet);
  bytes += previous_tables_.capacity() * sizeof(PreviousTable);
  return bytes;
}

size_t KeyVizHistory::MemoryBound(const KeyVizOptions& options, size_t live_tablets) {
  // A table without tablets is not sampled, so tables <= tablets.
  return sizeof(KeyVizHistory) + options.max_columns * (sizeof(KeyVizColumn) + options.max_rows * sizeof(KeyVizRow)) +
         live_tablets * (sizeof(PreviousTablet) + sizeof(PreviousTable));
}

uint32_t CoalesceColdRows(std::vector<KeyVizRow>* rows, size_t max_rows) {
  auto& r = *rows;
  while (r.size() > max_rows) {
    // Candidate pairs (i, i + 1) of one table, coldest first; merge
    // non-overlapping ones until the excess is gone or no pair is left.
    std::vector<std::pair<double, size_t>> pairs;
    for (size_t i = 0; i + 1 < r.size(); ++i) {
      if (r[i].table_id == r[i + 1].table_id) pairs.push_back({r[i].Ops() + r[i + 1].Ops(), i});
    }
    if (pairs.empty()) break;
    std::sort(pairs.begin(), pairs.end());
    size_t excess = r.size() - max_rows;
    std::vector<bool> absorbed(r.size(), false), taken(r.size(), false);
    for (const auto& [load, i] : pairs) {
      if (excess == 0) break;
      if (taken[i] || taken[i + 1]) continue;
      taken[i] = taken[i + 1] = true;
      KeyVizRow& a = r[i];
      const KeyVizRow& b = r[i + 1];
      a.tablets += b.tablets;
      a.reads += b.reads;
      a.writes += b.writes;
      a.bytes += b.bytes;
      absorbed[i + 1] = true;
      --excess;
    }
    size_t out = 0;
    for (size_t i = 0; i < r.size(); ++i) {
      if (!absorbed[i]) r[out++] = r[i];
    }
    r.resize(out);
  }
  if (r.size() <= max_rows) return 0;
  // More tables than rows: keep the busiest tables (one row each by now).
  std::vector<std::pair<double, uint32_t>> by_load;
  for (const auto& row : r) by_load.push_back({row.Ops(), row.table_id});
  std::sort(by_load.begin(), by_load.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<uint32_t> keep;
  for (size_t i = 0; i < max_rows; ++i) keep.push_back(by_load[i].second);
  std::sort(keep.begin(), keep.end());
  const uint32_t dropped = static_cast<uint32_t>(r.size() - max_rows);
  std::erase_if(r, [&](const KeyVizRow& row) { return !std::binary_search(keep.begin(), keep.end(), row.table_id); });
  return dropped;
}

}  // namespace tessera::keyviz
