#include "cql/executor/index_scan.h"

#include "cql/executor/index_scan_page.h"

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

// RunIndexScan's reader: each read waits for its replicas.
class IndexScan {
 public:
  IndexScan(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, const IndexChoice& choice,
            const IndexScanLimits& limits, const BindContext& bind, const RequestConsistency& consistency,
            std::vector<SourceRow>* out)
      : coordinator_(coordinator), consistency_(consistency), page_(table, choice, limits, bind.now_micros, out) {}

  Status Run(PagingState state, std::optional<std::string>* next) {
    std::optional<ClusteringBound> after;
    TESSERA_RETURN_IF_ERROR(page_.Start(std::move(state), &after));
    const IndexChoice& choice = page_.choice();
    for (;;) {
      if (page_.Wanted() == 0) {
        page_.Pause(next);
        return Status::OK();
      }
      TESSERA_ASSIGN_OR_RETURN(SliceResult slice,
                               coordinator_.ReadSlice(choice.backing, choice.value, page_.IndexSlice(after), consistency_));
      for (const RowResult& entry : slice.partition.rows) {
        std::vector<std::string> pk, ck;
        if (!page_.Split(entry, &pk, &ck)) continue;
        std::vector<RowResult> rows;
        std::optional<RowResult> static_row;
        TESSERA_RETURN_IF_ERROR(page_.static_index() ? ReadPartition(pk, &rows, &static_row)
                                                     : ReadRow(pk, ck, &rows, &static_row));
        page_.Consume(entry, pk, rows, static_row);
        if (page_.Wanted() == 0) {
          page_.Pause(next);
          return Status::OK();
        }
      }
      if (slice.next_cursor.empty() || slice.partition.rows.empty()) return Status::OK();  // index partition exhausted
      after = ClusteringBound{slice.partition.rows.back().clustering, false};
    }
  }

 private:
  // The base row of an entry and, when there is one and the table has
  // static columns, its partition's static row.
  Status ReadRow(const std::vector<std::string>& pk, const std::vector<std::string>& ck, std::vector<RowResult>* rows,
                 std::optional<RowResult>* static_row) {
    const auto& t = page_.table();
    TESSERA_ASSIGN_OR_RETURN(auto row, coordinator_.ReadRow(t, pk, ck, consistency_));
    if (!row) return Status::OK();  // a stale entry: the row is gone
    rows->push_back(std::move(*row));
    if (!t->HasStatic()) return Status::OK();
    SliceRequest req;
    req.limit = 0;
    TESSERA_ASSIGN_OR_RETURN(SliceResult r, coordinator_.ReadSlice(t, pk, req, consistency_));
    *static_row = std::move(r.partition.static_row);
    return Status::OK();
  }

  // An index on a static column: every row of the partition.
  Status ReadPartition(const std::vector<std::string>& pk, std::vector<RowResult>* rows,
                       std::optional<RowResult>* static_row) {
    SliceRequest req;
    for (bool first = true;; first = false) {
      TESSERA_ASSIGN_OR_RETURN(SliceResult slice, coordinator_.ReadSlice(page_.table(), pk, req, consistency_));
      if (first) *static_row = std::move(slice.partition.static_row);
      for (RowResult& r : slice.partition.rows) rows->push_back(std::move(r));
      if (slice.next_cursor.empty()) return Status::OK();
      req.cursor = slice.next_cursor;
    }
  }

  Coordinator& coordinator_;
  RequestConsistency consistency_;
  IndexScanPage page_;
};

}  // namespace

IndexScanPage::IndexScanPage(const std::shared_ptr<const TableSchema>& table, const IndexChoice& choice,
                             const IndexScanLimits& limits, int64_t now_micros, std::vector<SourceRow>* out)
    : t_(table), choice_(choice), limits_(limits), now_(static_cast<uint32_t>(now_micros / 1'000'000)), out_(out),
      pk_size_(table->PartitionKey().size()), static_index_(IsStaticIndex(*table, choice.index)) {}

Status IndexScanPage::Start(PagingState state, std::optional<ClusteringBound>* after) {
  state_ = std::move(state);
  after->reset();
  if (state_.cursor.empty()) return Status::OK();
  TESSERA_ASSIGN_OR_RETURN(auto last, DecodeComponents(state_.cursor));
  if (last.size() < pk_size_) return Status::InvalidArgument("Invalid paging state");
  last_pk_.assign(last.begin(), last.begin() + static_cast<long>(pk_size_));
  *after = ClusteringBound{std::move(last), false};
  return Status::OK();
}

SliceRequest IndexScanPage::IndexSlice(const std::optional<ClusteringBound>& after) const {
  SliceRequest req;
  if (after) req.lower = *after;
  req.limit = static_cast<size_t>(std::clamp<uint64_t>(Wanted(), 16, 1000));
  return req;
}

bool IndexScanPage::Split(const RowResult& entry, std::vector<std::string>* pk, std::vector<std::string>* ck) const {
  if (entry.clustering.size() < pk_size_) return false;
  pk->assign(entry.clustering.begin(), entry.clustering.begin() + static_cast<long>(pk_size_));
  ck->assign(entry.clustering.begin() + static_cast<long>(pk_size_), entry.clustering.end());
  return true;
}

void IndexScanPage::Consume(const RowResult& entry, const std::vector<std::string>& pk,
                            const std::vector<RowResult>& rows, const std::optional<RowResult>& static_row) {
  if (pk != last_pk_) {
    last_pk_ = pk;
    state_.rows_in_partition = 0;
  }
  const RowResult* statics = static_row ? &*static_row : nullptr;
  for (const RowResult& r : rows) {
    if (state_.rows_so_far >= limits_.limit) break;
    Emit(MakeRow(*t_, pk, &r, statics, now_));
  }
  if (static_index_ && rows.empty() && statics) Emit(MakeRow(*t_, pk, nullptr, statics, now_));
  state_.cursor = EncodeComponents(entry.clustering);
}

void IndexScanPage::Emit(SourceRow row) {
  if (state_.rows_so_far >= limits_.limit || state_.rows_in_partition >= limits_.per_partition) return;
  if (!MatchesAll(*t_, choice_.plan, row)) return;
  out_->push_back(std::move(row));
  ++state_.rows_so_far;
  ++state_.rows_in_partition;
}

void IndexScanPage::Pause(std::optional<std::string>* next) const {
  if (state_.rows_so_far >= limits_.limit || limits_.keep_all) return;
  *next = EncodePaging(state_, 4);
}

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

Status RunIndexScan(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, const IndexChoice& choice,
                    const IndexScanLimits& limits, PagingState state, const BindContext& bind,
                    const RequestConsistency& consistency, std::vector<SourceRow>* out,
                    std::optional<std::string>* next) {
  IndexScan scan(coordinator, table, choice, limits, bind, consistency, out);
  return scan.Run(std::move(state), next);
}

}  // namespace tessera::cql
