#include "storage/row_fragment.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "common/bytes.h"

namespace tessera {
namespace {

// Canonical position of a cell inside a row.
int CompareCellKey(const Cell& a, const Cell& b) {
  if (a.column_id != b.column_id) return a.column_id < b.column_id ? -1 : 1;
  bool ca = a.IsComplexDeletion(), cb = b.IsComplexDeletion();
  if (ca != cb) return ca ? -1 : 1;
  int c = a.path.compare(b.path);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// True if `a` wins over `b` for the same cell key (a total order).
bool Wins(const Cell& a, const Cell& b) {
  if (a.timestamp != b.timestamp) return a.timestamp > b.timestamp;
  bool da = a.IsTombstone() || a.IsComplexDeletion(), db = b.IsTombstone() || b.IsComplexDeletion();
  if (da != db) return da;
  if (a.IsExpiring() != b.IsExpiring()) return a.IsExpiring();
  if (a.local_deletion_time != b.local_deletion_time) return a.local_deletion_time > b.local_deletion_time;
  if (a.value != b.value) return a.value > b.value;
  return std::tie(a.flags, a.ttl) > std::tie(b.flags, b.ttl);
}

// The shards of both, per host id the higher (clock, count): a shard
// delivered twice is counted once. Both sorted by host id.
std::vector<CounterShard> MergeShards(const std::vector<CounterShard>& a, const std::vector<CounterShard>& b) {
  std::vector<CounterShard> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].host_id < b[j].host_id)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].host_id < a[i].host_id) {
      out.push_back(b[j++]);
    } else {
      out.push_back(std::tie(a[i].clock, a[i].count) >= std::tie(b[j].clock, b[j].count) ? a[i] : b[j]);
      ++i;
      ++j;
    }
  }
  return out;
}

uint64_t ShardSum(const std::vector<CounterShard>& shards) {
  uint64_t sum = 0;
  for (const auto& s : shards) sum += static_cast<uint64_t>(s.count);  // wraps
  return sum;
}

// The reconciliation of two cells of one key: counter increments add up,
// counter shards merge per host, a counter's tombstone absorbs both, and
// otherwise the winner (Wins) stays.
Cell Combine(Cell a, const Cell& b) {
  const bool a_live_counter = a.IsCounter() && !a.IsTombstone(), b_live_counter = b.IsCounter() && !b.IsTombstone();
  if (a.IsLiveCounter() && b.IsLiveCounter()) {
    // The unsharded parts (plain deltas) add up; the shards merge.
    const uint64_t unsharded = GetBigEndian64(a.value.data()) - ShardSum(a.shards) +
                               GetBigEndian64(b.value.data()) - ShardSum(b.shards);  // wraps
    if (!b.shards.empty()) a.shards = a.shards.empty() ? b.shards : MergeShards(a.shards, b.shards);
    if (!a.shards.empty()) a.flags |= Cell::kCounterShards;
    a.value.clear();
    PutBigEndian64(&a.value, unsharded + ShardSum(a.shards));
    a.timestamp = std::max(a.timestamp, b.timestamp);
    return a;
  }
  if (a_live_counter && b.IsTombstone()) return b;
  if (b_live_counter && a.IsTombstone()) return a;
  return Wins(b, a) ? b : a;
}

bool MarkerWins(const LivenessInfo& a, const LivenessInfo& b) {
  if (a.timestamp != b.timestamp) return a.timestamp > b.timestamp;
  if ((a.ttl != 0) != (b.ttl != 0)) return a.ttl != 0;
  return std::tie(a.expiry, a.ttl) > std::tie(b.expiry, b.ttl);
}

// Whether a row, range or partition deletion shadows a cell: by timestamp, and a counter's
// increments whatever their timestamps (summed increments keep only the greatest, so a
// timestamp rule would depend on which increments were summed first).
bool DeletesCell(const DeletionTime& deletion, const Cell& c) {
  return c.IsCounter() ? !deletion.IsLive() : deletion.Deletes(c.timestamp);
}

// Drops what the row deletion and complex deletions shadow.
void ApplyShadowing(RowFragment* row) {
  if (!row->deletion.IsLive() && row->deletion.Deletes(row->liveness.timestamp)) row->liveness = LivenessInfo{};
  std::vector<Cell> kept;
  kept.reserve(row->cells.size());
  size_t complex = SIZE_MAX;  // index in `kept` of the current column's complex deletion
  for (auto& c : row->cells) {
    if (DeletesCell(row->deletion, c)) continue;
    if (complex != SIZE_MAX && kept[complex].column_id != c.column_id) complex = SIZE_MAX;
    if (c.IsComplexDeletion()) {
      kept.push_back(std::move(c));
      complex = kept.size() - 1;
      continue;
    }
    if (complex != SIZE_MAX && c.timestamp <= kept[complex].timestamp) continue;
    kept.push_back(std::move(c));
  }
  row->cells = std::move(kept);
}

void PutI64(std::string* out, int64_t v) { PutBigEndian64(out, static_cast<uint64_t>(v)); }
void PutU32(std::string* out, uint32_t v) { PutBigEndian32(out, v); }

bool ReadI64(ByteReader* r, int64_t* v) {
  uint64_t u;
  if (!r->ReadBigEndian64(&u)) return false;
  *v = static_cast<int64_t>(u);
  return true;
}

}  // namespace

bool RowFragment::IsLive(uint32_t now) const {
  if (liveness.IsLive(now)) return true;
  return std::any_of(cells.begin(), cells.end(), [&](const Cell& c) { return c.IsLive(now); });
}

void EncodeRowFragment(const RowFragment& row, std::string* out) {
  out->push_back(static_cast<char>(kValueTypeRowFragment));
  uint8_t flags = (row.liveness.IsEmpty() ? 0 : 0x01) | (row.deletion.IsLive() ? 0 : 0x02);
  out->push_back(static_cast<char>(flags));
  if (flags & 0x01) {
    PutI64(out, row.liveness.timestamp);
    PutU32(out, static_cast<uint32_t>(row.liveness.ttl));
    PutU32(out, row.liveness.expiry);
  }
  if (flags & 0x02) {
    PutI64(out, row.deletion.timestamp);
    PutU32(out, row.deletion.local_deletion_time);
  }
  PutVarint64(out, row.cells.size());
  for (const auto& c : row.cells) {
    PutVarint64(out, c.column_id);
    out->push_back(static_cast<char>(c.flags));
    PutI64(out, c.timestamp);
    if (c.IsExpiring()) {
      PutU32(out, static_cast<uint32_t>(c.ttl));
      PutU32(out, c.local_deletion_time);
    } else if (c.IsTombstone() || c.IsComplexDeletion()) {
      PutU32(out, c.local_deletion_time);
    }
    if (c.HasPath()) {
      PutVarint64(out, c.path.size());
      out->append(c.path);
    }
    if (!c.IsTombstone() && !c.IsComplexDeletion()) {
      PutVarint64(out, c.value.size());
      out->append(c.value);
    }
    if (c.flags & Cell::kCounterShards) {
      PutVarint64(out, c.shards.size());
      for (const auto& shard : c.shards) {
        PutVarint64(out, shard.host_id.size());
        out->append(shard.host_id);
        PutI64(out, shard.clock);
        PutI64(out, shard.count);
      }
    }
  }
}

Status DecodeRowFragment(std::string_view in, RowFragment* row) {
  auto bad = [](const char* what) { return Status::Corruption(std::string("row fragment: ") + what); };
  ByteReader r(in);
  uint8_t type, flags;
  if (!r.ReadByte(&type) || type != kValueTypeRowFragment) return bad("wrong value type");
  if (!r.ReadByte(&flags) || (flags & ~0x03)) return bad("bad flags");
  *row = RowFragment{};
  uint32_t u;
  if (flags & 0x01) {
    if (!ReadI64(&r, &row->liveness.timestamp) || !r.ReadBigEndian32(&u) ||
        !r.ReadBigEndian32(&row->liveness.expiry)) {
      return bad("truncated row marker");
    }
    row->liveness.ttl = static_cast<int32_t>(u);
  }
  if (flags & 0x02) {
    if (!ReadI64(&r, &row->deletion.timestamp) || !r.ReadBigEndian32(&row->deletion.local_deletion_time)) {
      return bad("truncated row deletion");
    }
  }
  uint64_t n;
  if (!r.ReadVarint64(&n) || n > r.remaining()) return bad("bad cell count");
  row->cells.resize(n);
  for (auto& c : row->cells) {
    uint64_t cid;
    if (!r.ReadVarint64(&cid) || cid > UINT32_MAX || !r.ReadByte(&c.flags) || (c.flags & ~0x3F) ||
        !ReadI64(&r, &c.timestamp)) {
      return bad("truncated cell");
    }
    c.column_id = static_cast<uint32_t>(cid);
    if (c.IsExpiring()) {
      if (!r.ReadBigEndian32(&u) || !r.ReadBigEndian32(&c.local_deletion_time)) return bad("truncated ttl");
      c.ttl = static_cast<int32_t>(u);
    } else if (c.IsTombstone() || c.IsComplexDeletion()) {
      if (!r.ReadBigEndian32(&c.local_deletion_time)) return bad("truncated deletion time");
    }
    if (c.HasPath() && !r.ReadLengthPrefixed(&c.path)) return bad("truncated path");
    if (!c.IsTombstone() && !c.IsComplexDeletion() && !r.ReadLengthPrefixed(&c.value)) return bad("truncated value");
    if (c.flags & Cell::kCounterShards) {
      uint64_t shards;
      // Only a live counter's total has shards, one per host in host id order: what
      // reconciliation needs to stay commutative.
      if (!c.IsLiveCounter() || !r.ReadVarint64(&shards) || shards > r.remaining()) return bad("bad counter shards");
      c.shards.resize(shards);
      for (size_t i = 0; i < c.shards.size(); ++i) {
        CounterShard& shard = c.shards[i];
        if (!r.ReadLengthPrefixed(&shard.host_id) || !ReadI64(&r, &shard.clock) || !ReadI64(&r, &shard.count)) {
          return bad("truncated counter shard");
        }
        if (i > 0 && !(c.shards[i - 1].host_id < shard.host_id)) return bad("counter shards out of order");
      }
    }
  }
  if (!r.empty()) return bad("trailing bytes");
  return Status::OK();
}

void ReconcileRow(RowFragment* row, const RowFragment& other) {
  if (MarkerWins(other.liveness, row->liveness)) row->liveness = other.liveness;
  if (other.deletion.Supersedes(row->deletion)) row->deletion = other.deletion;
  std::vector<Cell> merged;
  merged.reserve(row->cells.size() + other.cells.size());
  size_t i = 0, j = 0;
  while (i < row->cells.size() || j < other.cells.size()) {
    if (j == other.cells.size()) {
      merged.push_back(std::move(row->cells[i++]));
    } else if (i == row->cells.size()) {
      merged.push_back(other.cells[j++]);
    } else {
      int c = CompareCellKey(row->cells[i], other.cells[j]);
      if (c < 0) {
        merged.push_back(std::move(row->cells[i++]));
      } else if (c > 0) {
        merged.push_back(other.cells[j++]);
      } else {
        merged.push_back(Combine(std::move(row->cells[i]), other.cells[j]));
        ++i;
        ++j;
      }
    }
  }
  row->cells = std::move(merged);
  ApplyShadowing(row);
}

void NormalizeRow(RowFragment* row) {
  std::vector<Cell> cells = std::move(row->cells);
  std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) { return CompareCellKey(a, b) < 0; });
  row->cells.clear();
  for (auto& c : cells) {
    if (!row->cells.empty() && CompareCellKey(row->cells.back(), c) == 0) {
      row->cells.back() = Combine(std::move(row->cells.back()), c);
    } else {
      row->cells.push_back(std::move(c));
    }
  }
  ApplyShadowing(row);
}

bool ApplyDeletion(const DeletionTime& deletion, RowFragment* row) {
  if (deletion.IsLive()) return false;
  bool changed = false;
  if (!row->liveness.IsEmpty() && deletion.Deletes(row->liveness.timestamp)) {
    row->liveness = LivenessInfo{};
    changed = true;
  }
  if (deletion.Deletes(row->deletion.timestamp) && !row->deletion.IsLive()) {
    row->deletion = DeletionTime{};
    changed = true;
  }
  size_t before = row->cells.size();
  std::erase_if(row->cells, [&](const Cell& c) { return DeletesCell(deletion, c); });
  return changed || row->cells.size() != before;
}

bool CollectGarbage(RowFragment* row, uint32_t now, int32_t gc_grace, bool purge) {
  bool changed = false;
  auto purgeable = [&](uint32_t ldt) { return purge && int64_t{ldt} + gc_grace <= int64_t{now}; };
  // An expired row marker still wins over older markers, so it stays until it
  // could be purged like a tombstone written at its write time.
  const LivenessInfo& m = row->liveness;
  if (!m.IsEmpty() && m.ttl > 0 && m.expiry <= now && purgeable(m.expiry - static_cast<uint32_t>(m.ttl))) {
    row->liveness = LivenessInfo{};
    changed = true;
  }
  if (!row->deletion.IsLive() && purgeable(row->deletion.local_deletion_time)) {
    row->deletion = DeletionTime{};
    changed = true;
  }
  for (auto& c : row->cells) {
    if (c.IsExpiring() && c.local_deletion_time <= now) {
      c.flags = static_cast<uint8_t>((c.flags & ~Cell::kExpiring) | Cell::kTombstone);
      c.local_deletion_time = c.local_deletion_time - static_cast<uint32_t>(c.ttl);
      c.ttl = 0;
      c.value.clear();
      changed = true;
    }
  }
  size_t before = row->cells.size();
  std::erase_if(row->cells, [&](const Cell& c) {
    return (c.IsTombstone() || c.IsComplexDeletion()) && purgeable(c.local_deletion_time);
  });
  return changed || row->cells.size() != before;
}

}  // namespace tessera
