#include "cql/executor/ann_search.h"

#include <algorithm>

#include "cql/executor/read_plan.h"
#include "db/vector_index.h"
#include "keys/storage_key.h"

namespace tessera::cql {
namespace {

struct Ranked {
  float similarity = 0;
  SourceRow row;
};

class AnnSearch {
 public:
  AnnSearch(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, const IndexDef& index, size_t column,
            std::vector<float> query, size_t k, const RequestConsistency& consistency, int64_t now_micros)
      : coordinator_(coordinator), table_(table), index_(index), column_(column), query_(std::move(query)), k_(k),
        consistency_(consistency), now_(static_cast<uint32_t>(now_micros / 1'000'000)) {}

  // Ranks the rows of the partitions `keys` exactly.
  Status RankPartitions(const std::vector<std::vector<std::string>>& keys) {
    for (const auto& pk : keys) {
      SliceRequest request;
      for (;;) {
        TESSERA_ASSIGN_OR_RETURN(SliceResult slice, coordinator_.ReadSlice(table_, pk, request, consistency_));
        for (const RowResult& r : slice.partition.rows) Consider(MakeRow(*table_, pk, &r, nullptr, now_));
        if (slice.next_cursor.empty()) break;
        request.cursor = slice.next_cursor;
      }
    }
    return Status::OK();
  }

  // Candidates from this node's index for the tablets it stores, from a
  // replica's index for each other tablet; a tablet whose replicas cannot
  // answer a search is read whole.
  Status RankTable() {
    std::vector<std::pair<std::string, std::string>> local;
    std::vector<KeyRange> elsewhere;
    for (const Database::TabletRange& t : coordinator_.database().TabletRanges(*table_)) {
      if (t.stored_here) local.emplace_back(t.start, t.end);
      else elsewhere.push_back({t.start, t.end});
    }
    if (!local.empty()) {
      TESSERA_RETURN_IF_ERROR(RankCandidates([&](size_t want) { return SearchHere(local, want); }));
    }
    for (const KeyRange& range : elsewhere) {
      bool search_failed = false;
      Status remote = RankCandidates([&](size_t want) -> Result<std::vector<std::string>> {
        TESSERA_ASSIGN_OR_RETURN(auto keys, coordinator_.SearchVectorsOfTablet(table_, range.begin, index_.name, query_, want));
        if (keys) return std::move(*keys);
        return SearchHere({{range.begin, range.end}}, want);  // stored here after all
      }, &search_failed);
      if (search_failed) {
        TESSERA_RETURN_IF_ERROR(RankRange(range));  // no replica's index answered: every row of the tablet
      } else {
        TESSERA_RETURN_IF_ERROR(remote);
      }
    }
    return Status::OK();
  }

  std::vector<SourceRow> Take() {
    std::stable_sort(ranked_.begin(), ranked_.end(),
                     [](const Ranked& a, const Ranked& b) { return a.similarity > b.similarity; });
    std::vector<SourceRow> out;
    for (size_t i = 0; i < ranked_.size() && i < k_; ++i) out.push_back(std::move(ranked_[i].row));
    return out;
  }

 private:
  // The storage keys of this node's `want` rows nearest the query in `ranges`.
  Result<std::vector<std::string>> SearchHere(const std::vector<std::pair<std::string, std::string>>& ranges,
                                              size_t want) {
    TESSERA_ASSIGN_OR_RETURN(auto found, coordinator_.database().SearchVectorIndex(*table_, index_.name, query_, want, ranges));
    std::vector<std::string> keys;
    for (auto& c : found) keys.push_back(std::move(c.storage_key));
    return keys;
  }

  // Asks `search` (an index: the storage keys of its `want` nearest rows)
  // for k, then for more while stale entries leave fewer than k rows.
  // *search_failed: the first search failed (nothing ranked; the status is
  // the search's); a later one ends the rounds with what they ranked.
  template <typename Search>
  Status RankCandidates(Search search, bool* search_failed = nullptr) {
    std::vector<std::string> seen;
    for (size_t want = k_, round = 0; round < 4; want *= 4, ++round) {
      Result<std::vector<std::string>> searched = search(want);
      if (!searched.ok()) {
        if (round > 0) return Status::OK();
        if (search_failed) *search_failed = true;
        return searched.status();
      }
      const std::vector<std::string>& candidates = *searched;
      size_t live = 0;
      for (const std::string& key : candidates) {
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
          ++live;  // ranked in an earlier round (if it was live)
          continue;
        }
        seen.push_back(key);
        TESSERA_ASSIGN_OR_RETURN(bool found, ReadCandidate(key));
        if (found) ++live;
      }
      if (live >= k_ || candidates.size() < want) break;
    }
    return Status::OK();
  }

  // Reads the row at a candidate's storage key back at the request's level.
  Result<bool> ReadCandidate(const std::string& storage_key) {
    auto decoded = DecodeStorageKey(*table_, storage_key);
    if (!decoded.ok() || decoded->kind != KeyKind::kRow) return false;
    TESSERA_ASSIGN_OR_RETURN(auto row, coordinator_.ReadRow(table_, decoded->partition_key, decoded->clustering, consistency_));
    if (!row) return false;
    return Consider(MakeRow(*table_, decoded->partition_key, &*row, nullptr, now_));
  }

  Status RankRange(const KeyRange& range) {
    RangeRequest request;
    request.range = range;
    request.limit = 4096;
    for (;;) {
      TESSERA_ASSIGN_OR_RETURN(RangeResult result, coordinator_.ScanRange(table_, request, consistency_));
      for (const PartitionResult& p : result.partitions) {
        for (const RowResult& r : p.rows) Consider(MakeRow(*table_, p.partition_key, &r, nullptr, now_));
      }
      if (result.next_cursor.empty()) return Status::OK();
      request.cursor = result.next_cursor;
    }
  }

  // Ranks a row by its vector; false when it has none.
  bool Consider(SourceRow row) {
    const auto& cell = row.values[column_];
    if (!cell) return false;
    auto v = DecodeFloatVector(*cell, static_cast<uint32_t>(query_.size()));
    if (!v.ok()) return false;
    ranked_.push_back({VectorSimilarity(index_.similarity, query_, *v), std::move(row)});
    return true;
  }

  Coordinator& coordinator_;
  const std::shared_ptr<const TableSchema>& table_;
  const IndexDef& index_;
  const size_t column_;
  const std::vector<float> query_;
  const size_t k_;
  const RequestConsistency& consistency_;
  const uint32_t now_;
  std::vector<Ranked> ranked_;
};

}  // namespace

Status RunAnnSearch(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, const SelectStatement& s,
                    uint64_t limit, const BindContext& bind, const RequestConsistency& consistency,
                    std::vector<SourceRow>* out) {
  const ColumnDef* column = table->FindColumn(s.ann->column);
  if (!column) return Status::InvalidArgument("Undefined column name " + s.ann->column);
  if (column->type.kind() != TypeKind::kVector || column->type.params()[0].kind() != TypeKind::kFloat) {
    return Status::InvalidArgument("ANN ordering is only supported on float vector indexes");
  }
  const IndexDef* index = nullptr;
  for (const IndexDef& i : table->indexes) {
    if (i.is_vector() && i.column_id == column->id) index = &i;
  }
  if (!index) return Status::InvalidArgument("ANN ordering by vector requires the column to be indexed");
  if (limit == UINT64_MAX || limit > kMaxAnnLimit) {
    return Status::InvalidArgument("Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than " +
                                   std::to_string(kMaxAnnLimit) + ". LIMIT was " +
                                   (limit == UINT64_MAX ? std::string("NO LIMIT") : std::to_string(limit)));
  }
  TESSERA_ASSIGN_OR_RETURN(BoundValue bound, BindTerm(s.ann->vector, column->type, column->name, bind));
  if (bound.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Unsupported null value for ANN OF " + column->name);
  TESSERA_ASSIGN_OR_RETURN(std::vector<float> query, DecodeFloatVector(bound.bytes, column->type.dimension()));
  std::optional<ReadPlan> plan;
  if (!s.where.empty()) {
    auto planned = PlanRead(*table, s.where, /*allow_filtering=*/false, bind);
    const bool whole_partitions = planned.ok() && planned->kind == ReadPlan::Kind::kPartitions &&
                                  planned->filters.empty() && !planned->lower && !planned->upper &&
                                  planned->clustering_prefixes.size() == 1 && planned->clustering_prefixes[0].empty();
    if (!whole_partitions) {
      return Status::InvalidArgument("ANN ordering by vector requires all restricted column(s) to be indexed");
    }
    plan = std::move(planned).value();
  }
  const size_t column_index = static_cast<size_t>(column - table->columns.data());
  AnnSearch search(coordinator, table, *index, column_index, std::move(query), static_cast<size_t>(limit), consistency,
                   bind.now_micros);
  if (plan) {
    TESSERA_RETURN_IF_ERROR(search.RankPartitions(plan->partition_keys));
  } else {
    TESSERA_RETURN_IF_ERROR(search.RankTable());
  }
  for (auto& row : search.Take()) out->push_back(std::move(row));
  return Status::OK();
}

}  // namespace tessera::cql
