#include "storage/counter_shards.h"

#include <algorithm>

#include "common/bytes.h"

namespace tessera {
namespace {

bool IsIncrement(const Cell& c) { return c.IsLiveCounter() && !(c.flags & Cell::kCounterShards); }

// `host_id`'s shard of the cell of `current` with c's column and path, if any.
const CounterShard* OwnShard(const RowFragment& current, const Cell& c, std::string_view host_id) {
  for (const Cell& held : current.cells) {
    if (held.column_id != c.column_id || held.path != c.path || held.IsComplexDeletion()) continue;
    for (const CounterShard& s : held.shards) {
      if (s.host_id == host_id) return &s;
    }
  }
  return nullptr;
}

}  // namespace

bool HasCounterIncrements(const RowFragment& row) {
  return std::any_of(row.cells.begin(), row.cells.end(), IsIncrement);
}

RowFragment LeadCounterIncrements(const RowFragment& current, RowFragment increments, std::string_view host_id) {
  for (Cell& c : increments.cells) {
    if (!IsIncrement(c)) continue;
    const CounterShard* own = OwnShard(current, c, host_id);
    CounterShard next;
    next.host_id = std::string(host_id);
    next.clock = own ? static_cast<int64_t>(static_cast<uint64_t>(own->clock) + 1) : 1;  // wraps, never UB
    next.count = static_cast<int64_t>((own ? static_cast<uint64_t>(own->count) : 0) +
                                      GetBigEndian64(c.value.data()));  // wraps
    c.flags |= Cell::kCounterShards;
    c.value.clear();
    PutBigEndian64(&c.value, static_cast<uint64_t>(next.count));
    c.shards.assign(1, std::move(next));
  }
  return increments;
}

}  // namespace tessera
