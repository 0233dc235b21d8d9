#include "cql/executor/index_scan.h"

#include <algorithm>

#include "common/bytes.h"

namespace tessera::cql {
namespace {

size_t ColumnIndex(const TableSchema& t, const ColumnDef* c) { return static_cast<size_t>(c - t.columns.data()); }

// Whether `index` on column `c` serves relation `r`.
bool Serves(const IndexDef& index, const ColumnDef& c, const Relation& r) {
  const bool multi = c.type.IsMultiCell();
  switch (index.target) {
    case IndexDef::Target::kValues:
      if (multi) return r.lhs == Relation::Lhs::kColumn && r.op == Relation::Op::kContains;
      return r.lhs == Relation::Lhs::kColumn && r.op == Relation::Op::kEq;
    case IndexDef::Target::kFull: return r.lhs == Relation::Lhs::kColumn && r.op == Relation::Op::kEq;
    case IndexDef::Target::kKeys: return r.lhs == Relation::Lhs::kColumn && r.op == Relation::Op::kContainsKey;
    case IndexDef::Target::kEntries: return r.lhs == Relation::Lhs::kMapElement && r.op == Relation::Op::kEq;
  }
  return false;
}

std::string EncodeComponents(const std::vector<std::string>& components) {
  std::string out;
  for (const auto& c : components) {
    PutVarint64(&out, c.size());
    out += c;
  }
  return out;
}

Result<std::vector<std::string>> DecodeComponents(const std::string& s) {
  ByteReader r(s);
  std::vector<std::string> out;
  while (!r.rest().empty()) {
    uint64_t n = 0;
    std::string_view v;
    if (!r.ReadVarint64(&n) || !r.ReadBytes(static_cast<size_t>(n), &v)) {
      return Status::InvalidArgument("Invalid paging state");
    }
    out.emplace_back(v);
  }
  return out;
}

class IndexScan {
 public:
  IndexScan(Database& db, const std::shared_ptr<const TableSchema>& table, const IndexChoice& choice,
            const IndexScanLimits& limits, const BindContext& bind, const RequestConsistency& consistency,
            std::vector<SourceRow>* out)
      : db_(db), t_(table), choice_(choice), limits_(limits), now_(static_cast<uint32_t>(bind.now_micros / 1'000'000)),
        consistency_(consistency), out_(out), pk_size_(table->PartitionKey().size()), static_index_(IsStaticIndex(*table, choice.index)) {}

  Status Run(PagingState state, std::optional<std::string>* next) {
    state_ = std::move(state);
    std::optional<ClusteringBound> after;
    if (!state_.cursor.empty()) {
      TESSERA_ASSIGN_OR_RETURN(auto last, DecodeComponents(state_.cursor));
      if (last.size() < pk_size_) return Status::InvalidArgument("Invalid paging state");
      last_pk_.assign(last.begin(), last.begin() + static_cast<long>(pk_size_));
      after = ClusteringBound{std::move(last), false};
    }
    for (;;) {
      const uint64_t want = Wanted();
      if (want == 0) return Pause(next);
      SliceRequest req;
      if (after) req.lower = *after;
      req.limit = static_cast<size_t>(std::clamp<uint64_t>(want, 16, 1000));
      TESSERA_ASSIGN_OR_RETURN(SliceResult slice, db_.ReadSlice(choice_.backing, choice_.value, req, consistency_));
      for (const RowResult& entry : slice.partition.rows) {
        if (entry.clustering.size() < pk_size_) continue;
        std::vector<std::string> pk(entry.clustering.begin(), entry.clustering.begin() + static_cast<long>(pk_size_));
        std::vector<std::string> ck(entry.clustering.begin() + static_cast<long>(pk_size_), entry.clustering.end());
        if (pk != last_pk_) {
          last_pk_ = pk;
          state_.rows_in_partition = 0;
        }
        TESSERA_RETURN_IF_ERROR(static_index_ ? EmitPartition(pk) : EmitRow(pk, ck));
        state_.cursor = EncodeComponents(entry.clustering);
        if (Wanted() == 0) return Pause(next);
      }
      if (slice.next_cursor.empty() || slice.partition.rows.empty()) return Status::OK();  // index partition exhausted
      after = ClusteringBound{slice.partition.rows.back().clustering, false};
    }
  }

 private:
  uint64_t Wanted() const {
    const uint64_t by_limit = limits_.limit - std::min(limits_.limit, state_.rows_so_far);
    if (limits_.keep_all) return by_limit;
    return std::min(by_limit, limits_.page - std::min<uint64_t>(limits_.page, out_->size()));
  }

  void Emit(SourceRow row) {
    if (state_.rows_so_far >= limits_.limit || state_.rows_in_partition >= limits_.per_partition) return;
    if (!MatchesAll(*t_, choice_.plan, row)) return;
    out_->push_back(std::move(row));
    ++state_.rows_so_far;
    ++state_.rows_in_partition;
  }

  Result<std::optional<RowResult>> StaticRow(const std::vector<std::string>& pk) {
    if (!t_->HasStatic()) return std::optional<RowResult>();
    SliceRequest req;
    req.limit = 0;
    TESSERA_ASSIGN_OR_RETURN(SliceResult r, db_.ReadSlice(t_, pk, req, consistency_));
    return r.partition.static_row;
  }

  Status EmitRow(const std::vector<std::string>& pk, const std::vector<std::string>& ck) {
    TESSERA_ASSIGN_OR_RETURN(auto row, db_.ReadRow(t_, pk, ck, consistency_));
    if (!row) return Status::OK();  // a stale entry: the row is gone
    TESSERA_ASSIGN_OR_RETURN(auto static_row, StaticRow(pk));
    Emit(MakeRow(*t_, pk, &*row, static_row ? &*static_row : nullptr, now_));
    return Status::OK();
  }

  // An index on a static column: every row of the partition.
  Status EmitPartition(const std::vector<std::string>& pk) {
    SliceRequest req;
    std::optional<RowResult> static_row;
    bool first = true, any = false;
    for (;;) {
      TESSERA_ASSIGN_OR_RETURN(SliceResult slice, db_.ReadSlice(t_, pk, req, consistency_));
      if (first) static_row = slice.partition.static_row;
      first = false;
      for (const RowResult& r : slice.partition.rows) {
        any = true;
        Emit(MakeRow(*t_, pk, &r, static_row ? &*static_row : nullptr, now_));
      }
      if (slice.next_cursor.empty() || state_.rows_so_far >= limits_.limit) break;
      req.cursor = slice.next_cursor;
    }
    if (!any && static_row) Emit(MakeRow(*t_, pk, nullptr, &*static_row, now_));
    return Status::OK();
  }

  Status Pause(std::optional<std::string>* next) {
    if (state_.rows_so_far >= limits_.limit || limits_.keep_all) return Status::OK();
    *next = EncodePaging(state_, 4);
    return Status::OK();
  }

  Database& db_;
  std::shared_ptr<const TableSchema> t_;
  const IndexChoice& choice_;
  IndexScanLimits limits_;
  uint32_t now_;
  RequestConsistency consistency_;
  std::vector<SourceRow>* out_;
  size_t pk_size_;
  bool static_index_;
  PagingState state_;
  std::vector<std::string> last_pk_;
};

}  // namespace

Result<std::optional<IndexChoice>> ChooseIndex(Database& db, const TableSchema& table, const std::vector<Relation>& where,
                                               bool allow_filtering, const BindContext& ctx) {
  if (table.indexes.empty()) return std::optional<IndexChoice>();
  const Relation* served = nullptr;
  const IndexDef* index = nullptr;
  const ColumnDef* column = nullptr;
  for (const Relation& r : where) {
    if (r.lhs == Relation::Lhs::kToken) return std::optional<IndexChoice>();
    if (served || (r.lhs != Relation::Lhs::kColumn && r.lhs != Relation::Lhs::kMapElement)) continue;
    const ColumnDef* c = table.FindColumn(r.columns[0]);
    if (!c) continue;
    for (const IndexDef& i : table.indexes) {
      if (!i.is_vector() && i.column_id == c->id && Serves(i, *c, r)) {
        served = &r;
        index = &i;
        column = c;
        break;
      }
    }
  }
  if (!served) return std::optional<IndexChoice>();
  std::vector<Relation> rest;
  for (const Relation& r : where) {
    if (&r != served) rest.push_back(r);
  }
  TESSERA_RETURN_IF_ERROR(PlanRead(table, rest, allow_filtering, ctx).status());
  IndexChoice choice;
  TESSERA_ASSIGN_OR_RETURN(choice.plan, PlanRead(table, where, /*allow_filtering=*/true, ctx));
  choice.index = *index;
  if (choice.plan.kind == ReadPlan::Kind::kPartitions) {
    choice.within_partitions = true;
    return std::optional<IndexChoice>(std::move(choice));
  }
  const KeyRange whole = WholeTableRange(table);
  if (choice.plan.range.begin != whole.begin || choice.plan.range.end != whole.end) {
    return std::optional<IndexChoice>();  // a key range of a range table: scanned, not looked up
  }
  auto backing = db.GetTable(table.keyspace, index->backing_table);
  if (!backing.ok()) return std::optional<IndexChoice>();
  choice.backing = *backing;
  const size_t col = ColumnIndex(table, column);
  for (const Filter& f : choice.plan.filters) {
    if (f.column != col || f.values.empty()) continue;
    if (index->target == IndexDef::Target::kEntries) {
      if (!f.map_key || served->op != f.op) continue;
      choice.value = {*f.map_key, f.values[0]};
    } else {
      if (f.map_key || f.op != served->op) continue;
      choice.value = {f.values[0]};
    }
    break;
  }
  if (choice.value.empty()) return std::optional<IndexChoice>();
  return std::optional<IndexChoice>(std::move(choice));
}

Status RunIndexScan(Database& db, const std::shared_ptr<const TableSchema>& table, const IndexChoice& choice,
                    const IndexScanLimits& limits, PagingState state, const BindContext& bind,
                    const RequestConsistency& consistency, std::vector<SourceRow>* out,
                    std::optional<std::string>* next) {
  IndexScan scan(db, table, choice, limits, bind, consistency, out);
  return scan.Run(std::move(state), next);
}

}  // namespace tessera::cql
