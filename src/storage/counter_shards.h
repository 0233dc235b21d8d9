// Counter increments led by one replica (Cassandra's counter write path,
// CounterMutation.apply; issue 30 item 2): on a cluster an increment is not
// stored as a delta but turned by a leader replica into its new shard, which
// is what every replica then stores (storage/row_fragment.h, "Counter
// shards"). A shard travels and reconciles idempotently, so a hint replayed
// after its write arrived, or a read repair, counts an increment once.
//
// The leader holds the row as it stores it (`current`) and, for each
// increment of `increments` (a live counter cell with an 8-byte delta and no
// shards), takes its own shard of that cell (clock c, count n; none: 0, 0)
// to (c + 1, n + delta): the result carries that one shard, and its value
// is the shard's count. Cells that are not increments (a counter's
// tombstone, a row deletion) pass unchanged. The leader must store the
// result before it leads the next increment of the same cell (the caller
// serializes them), or two increments would share a clock and one be lost.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "storage/row_fragment.h"

namespace tessera {

// Whether `row` has a counter increment that a leader must turn into a shard.
bool HasCounterIncrements(const RowFragment& row);

// `increments` with every increment replaced by `host_id`'s next shard of
// its cell, given `current` (the leader's stored row; empty if none).
RowFragment LeadCounterIncrements(const RowFragment& current, RowFragment increments, std::string_view host_id);

}  // namespace tessera
