// Coordinator (coordinator/coordinator.h): the secondary index entries and
// the view rows of a write, kept right around its base write.
//
// Every write to a table with derived rows reads the rows it touches before
// and after (the whole partition for partition and range deletions), under
// a lock per partition stripe, and writes the difference: index entries that
// went are deleted, new ones (or ones whose expiry moved) inserted with the
// TTL their cell has left (db/secondary_index.h); view rows as
// coordinator/view_maintenance.cc says.
#include <algorithm>

#include "coordinator/coordinator.h"

namespace tessera {
namespace {

bool HasStaticIndex(const TableSchema& t) {
  return std::any_of(t.indexes.begin(), t.indexes.end(), [&](const IndexDef& i) { return IsStaticIndex(t, i); });
}

}  // namespace

std::mutex& Coordinator::PartitionStripe(uint32_t table_id, const std::vector<std::string>& pk) {
  size_t h = std::hash<uint32_t>()(table_id);
  for (const auto& c : pk) h = h * 31 + std::hash<std::string>()(c);
  return stripes_[h % stripes_.size()];
}

Status Coordinator::ReadWholePartition(const std::shared_ptr<const TableSchema>& table, const std::vector<std::string>& pk,
                                    const RequestConsistency& consistency, std::optional<RowResult>* static_row, std::vector<RowResult>* rows) {
  SliceRequest req;
  bool first = true;
  for (;;) {
    TESSERA_ASSIGN_OR_RETURN(SliceResult slice, ReadSlice(table, pk, req, consistency));
    if (first) *static_row = slice.partition.static_row;
    first = false;
    for (auto& r : slice.partition.rows) rows->push_back(std::move(r));
    if (slice.next_cursor.empty()) return Status::OK();
    req.cursor = slice.next_cursor;
  }
}

Status Coordinator::CollectDerived(const std::vector<IndexedWrite>& writes, IndexEntrySets* out, ViewRowSets* views,
                                const RequestConsistency& consistency) {
  for (const IndexedWrite& w : writes) {
    const Mutation& m = *w.mutation;
    const TableSchema& t = *w.table;
    std::optional<RowResult> static_row;
    std::vector<RowResult> rows;
    const bool whole = m.delete_partition || !m.range_deletions.empty();
    const bool static_write = std::any_of(m.rows.begin(), m.rows.end(), [](const RowWrite& r) { return r.is_static; });
    if (whole) {
      TESSERA_RETURN_IF_ERROR(ReadWholePartition(w.table, m.partition_key, consistency, &static_row, &rows));
    } else {
      for (const RowWrite& r : m.rows) {
        if (r.is_static) continue;
        TESSERA_ASSIGN_OR_RETURN(auto row, ReadRow(w.table, m.partition_key, r.clustering, consistency));
        if (row) rows.push_back(std::move(*row));
      }
      if (static_write && HasStaticIndex(t)) {
        SliceRequest req;
        req.limit = 0;
        TESSERA_ASSIGN_OR_RETURN(SliceResult slice, ReadSlice(w.table, m.partition_key, req, consistency));
        static_row = slice.partition.static_row;
      }
    }
    for (const IndexDef& index : t.indexes) {
      if (index.is_vector()) continue;  // kept by the storage write itself (db/vector_index.h)
      auto& entries = (*out)[{t.id, index.name}];
      if (IsStaticIndex(t, index)) {
        CollectIndexEntries(t, index, m.partition_key, nullptr, static_row ? &*static_row : nullptr, &entries);
        continue;
      }
      for (const RowResult& r : rows) CollectIndexEntries(t, index, m.partition_key, &r, nullptr, &entries);
    }
    CollectViewRows(t, t.views, m.partition_key, rows, views);
  }
  for (auto& [key, entries] : *out) {
    std::sort(entries.begin(), entries.end());
    entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  }
  return Status::OK();
}

Status Coordinator::WriteIndexChanges(const IndexEntrySets& before, const IndexEntrySets& after,
                                   const RequestConsistency& consistency) {
  const int64_t ts = db_->NextTimestamp();
  const auto now_seconds = static_cast<uint32_t>(db_->NowMicros() / 1'000'000);
  auto same_row = [](const IndexEntry& a, const IndexEntry& b) { return a.value == b.value && a.base_key == b.base_key; };
  std::vector<Mutation> writes;
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
  if (writes.empty()) return Status::OK();
  return ApplyBase(writes, nullptr, consistency);
}

Status Coordinator::ApplyWithDerivedRows(const std::vector<Mutation>& mutations,
                                         const std::vector<IndexedWrite>& indexed,
                                         std::vector<std::string>* warnings, const RequestConsistency& consistency) {
  // One lock per partition stripe, taken in address order (no deadlock between batches).
  std::vector<std::mutex*> stripes;
  for (const IndexedWrite& w : indexed) stripes.push_back(&PartitionStripe(w.table->id, w.mutation->partition_key));
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  locks.reserve(stripes.size());
  for (std::mutex* s : stripes) locks.emplace_back(*s);

  IndexEntrySets before, after;
  ViewRowSets views_before, views_after;
  TESSERA_RETURN_IF_ERROR(CollectDerived(indexed, &before, &views_before, consistency));
  TESSERA_RETURN_IF_ERROR(ApplyBase(mutations, warnings, consistency));
  TESSERA_RETURN_IF_ERROR(CollectDerived(indexed, &after, &views_after, consistency));
  for (const auto& [key, entries] : after) before.try_emplace(key);  // a key only after: all new
  TESSERA_RETURN_IF_ERROR(WriteIndexChanges(before, after, consistency));
  return WriteViewChanges(views_before, views_after, consistency);
}


}  // namespace tessera
