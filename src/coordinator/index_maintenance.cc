// Coordinator (coordinator/coordinator.h): the secondary index entries and
// the view rows of a write, kept right around its base write.
//
// What a write to a table with derived rows read before and after its base
// write (coordinator/derived_writes.cc) gives its index entries; the
// difference is written: entries that went are deleted, new ones (or ones
// whose expiry moved) inserted with the TTL their cell has left
// (db/secondary_index.h); view rows as coordinator/view_maintenance.cc says.
#include <algorithm>

#include "coordinator/coordinator.h"

namespace tessera {
namespace {

bool HasStaticIndex(const TableSchema& t) {
  return std::any_of(t.indexes.begin(), t.indexes.end(), [&](const IndexDef& i) { return IsStaticIndex(t, i); });
}

}  // namespace

void Coordinator::AddDerived(const IndexedWrite& w, const TouchedRows& touched, IndexEntrySets* out,
                             ViewRowSets* views) const {
  const Mutation& m = *w.mutation;
  const TableSchema& t = *w.table;
  for (const IndexDef& index : t.indexes) {
    if (index.is_vector()) continue;  // kept by the storage write itself (db/vector_index.h)
    auto& entries = (*out)[{t.id, index.name}];
    if (IsStaticIndex(t, index)) {
      CollectIndexEntries(t, index, m.partition_key, nullptr, touched.static_row ? &*touched.static_row : nullptr,
                          &entries);
      continue;
    }
    for (const RowResult& r : touched.rows) CollectIndexEntries(t, index, m.partition_key, &r, nullptr, &entries);
  }
  CollectViewRows(t, t.views, m.partition_key, touched.rows, views);
}

bool Coordinator::NeedsStaticRow(const IndexedWrite& w) {
  const Mutation& m = *w.mutation;
  return std::any_of(m.rows.begin(), m.rows.end(), [](const RowWrite& r) { return r.is_static; }) &&
         HasStaticIndex(*w.table);
}

void Coordinator::IndexChanges(const IndexEntrySets& before, const IndexEntrySets& after,
                               std::vector<Mutation>* out) const {
  const int64_t ts = db_->NextTimestamp();
  const auto now_seconds = static_cast<uint32_t>(db_->NowMicros() / 1'000'000);
  auto same_row = [](const IndexEntry& a, const IndexEntry& b) { return a.value == b.value && a.base_key == b.base_key; };
  std::vector<Mutation> writes;  // this call's, apart from those already in `out`
  for (const auto& [key, old_entries] : before) {
    auto base = db_->catalog().GetTableById(key.first);
    const IndexDef* index = base ? base->FindIndex(key.second) : nullptr;
    if (!index) continue;
    auto backing = db_->catalog().GetTable(base->keyspace, index->backing_table);
    if (!backing.ok()) continue;
    const auto found = after.find(key);
    static const std::vector<IndexEntry> kNone;
    const std::vector<IndexEntry>& new_entries = found == after.end() ? kNone : found->second;
    auto mutation_for = [&](const std::vector<std::string>& value, int32_t ttl) -> Mutation& {
      for (auto& m : writes) {
        if (m.table == *backing && m.partition_key == value && m.ttl_seconds == ttl) return m;
      }
      Mutation m;
      m.table = *backing;
      m.partition_key = value;
      m.timestamp_micros = ts;
      m.ttl_seconds = ttl;
      writes.push_back(std::move(m));
      return writes.back();
    };
    for (const IndexEntry& e : old_entries) {
      const bool kept = std::any_of(new_entries.begin(), new_entries.end(), [&](const IndexEntry& n) { return same_row(e, n); });
      if (kept) continue;
      RowWrite del;
      del.clustering = e.base_key;
      del.delete_row = true;
      mutation_for(e.value, 0).rows.push_back(std::move(del));
    }
    for (const IndexEntry& e : new_entries) {
      if (std::binary_search(old_entries.begin(), old_entries.end(), e)) continue;  // unchanged, expiry included
      if (e.expiry != 0 && e.expiry <= now_seconds) continue;                        // expired meanwhile
      RowWrite ins;
      ins.clustering = e.base_key;
      ins.insert = true;
      mutation_for(e.value, e.expiry == 0 ? 0 : static_cast<int32_t>(e.expiry - now_seconds)).rows.push_back(std::move(ins));
    }
  }
  for (Mutation& m : writes) out->push_back(std::move(m));
}

}  // namespace tessera
