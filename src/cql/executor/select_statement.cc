#include "cql/executor/select_statement.h"

#include <algorithm>
#include <map>
#include <span>

#include "common/bytes.h"
#include "cql/executor/group_by.h"
#include "cql/executor/json_values.h"
#include "cql/executor/modification_statements.h"
#include "cql/executor/read_plan.h"
#include "cql/executor/select_executor.h"
#include "cql/executor/selection.h"
#include "cql/executor/source_rows.h"
#include "cql/executor/ann_search.h"
#include "cql/executor/index_scan.h"
#include "keys/storage_key.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera::cql {
namespace {

using select_detail::Executor;
using select_detail::Limits;

// ---- execution ----

Result<uint64_t> BindLimit(const std::optional<Term>& t, const BindContext& ctx, const char* what) {
  if (!t) return UINT64_MAX;
  TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(*t, CqlType::Scalar(TypeKind::kInt), what, ctx));
  if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument(std::string("Invalid null value of ") + what);
  auto v = static_cast<int32_t>(GetBigEndian32(b.bytes.data()));
  if (v <= 0) return Status::InvalidArgument(std::string(what) + " must be strictly positive");
  return static_cast<uint64_t>(v);
}

Result<bool> Reversed(const TableSchema& t, const SelectStatement& s, const ReadPlan& plan) {
  if (s.order_by.empty()) return false;
  if (plan.kind != ReadPlan::Kind::kPartitions) {
    return Status::InvalidArgument("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
  }
  auto ck = t.Clustering();
  std::optional<bool> reversed;
  for (size_t i = 0; i < s.order_by.size(); ++i) {
    const auto& [name, desc] = s.order_by[i];
    if (i >= ck.size() || ck[i]->name != name) {
      return Status::InvalidArgument("Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY");
    }
    bool r = desc != (ck[i]->order == SortOrder::kDesc);
    if (reversed && *reversed != r) return Status::InvalidArgument("Unsupported order by relation");
    reversed = r;
  }
  return reversed.value_or(false);
}

constexpr uint8_t kGroupPaging = 3;  // paging state kind of GROUP BY: the groups already returned

// GROUP BY: one output row per group (folded by the aggregates, or its first row), with LIMIT,
// PER PARTITION LIMIT and the page size counting groups. `rows` are all the rows the query
// reads; the page resumes after `groups_before` groups.
// A user-defined function or aggregate that fails fails the query (`*failure`, first only).
void FoldGroups(const TableSchema& t, const Selection& sel, const GroupBy& group, const std::vector<SourceRow>& rows,
                const Limits& limits, uint64_t groups_before, const SelectContext& ctx, ResultSet* result,
                Status* failure) {
  const auto groups = GroupRows(t, group, rows);
  uint64_t counted = 0, in_partition = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto [begin, end] = groups[g];
    in_partition = g > 0 && SamePartition(t, rows[groups[g - 1].first], rows[begin]) ? in_partition + 1 : 0;
    if (in_partition >= limits.per_partition) continue;
    if (counted >= limits.limit) break;
    if (counted >= groups_before) {
      if (result->rows.size() >= limits.page) {
        PagingState p;
        p.rows_so_far = counted;
        result->paging_state = EncodePaging(p, kGroupPaging);
        break;
      }
      std::span<const SourceRow> members(rows.data() + begin, end - begin);
      result->rows.push_back(sel.is_aggregate() ? sel.Aggregate(members, failure)
                                                : sel.Project(rows[begin], ctx.bind.now_micros, ctx.bind.rng, failure));
    }
    ++counted;
  }
}

// The tombstone guardrails of a read that visited `tombstones` and returned
// `live_rows`: past tombstone_fail, Busy (kTombstoneOverwhelming); past
// tombstone_warn, a client warning and a record for the tombstone report.
Status CheckTombstones(Database& db, const TableSchema& table, uint64_t tombstones, uint64_t live_rows,
                       const SelectContext& ctx, ResultSet* result) {
  if (tombstones > ctx.guardrails.tombstone_warn) db.RecordTombstoneRead(table, tombstones, live_rows);
  if (tombstones > ctx.guardrails.tombstone_fail) {
    return Status::Busy(std::string(kTombstoneOverwhelming) + ": read " + std::to_string(tombstones) +
                        " tombstones in " + table.keyspace + "." + table.name + " (tombstone_fail_threshold " +
                        std::to_string(ctx.guardrails.tombstone_fail) + ")");
  }
  if (tombstones > ctx.guardrails.tombstone_warn) {
    result->warnings.push_back("Read " + std::to_string(live_rows) + " live rows and " + std::to_string(tombstones) +
                               " tombstone cells for query on " + table.keyspace + "." + table.name +
                               " (see tombstone_warn_threshold " + std::to_string(ctx.guardrails.tombstone_warn) +
                               "); prefer TTL to deletes and bounded range deletions");
  }
  return Status::OK();
}

// GROUP BY (group_by.h) over the table: reads in chunks until the page's
// groups are known complete, folds them, and ends the page at a group
// boundary. Chunks are sized from the rows per group seen so far, to end
// where the page's last group should end, then one row more shows whether it
// did. The next page resumes right after the last row of the page's last
// group: the read's own paging state there, kept from the chunk that ended
// on it, or else from reading that chunk again up to that row. Rows written
// or deleted next to the boundary between those two reads can move it; the
// next page then skips the rest of the group it stopped in (paging through
// rows that change gives no stronger promise).
Status PageGroups(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, const ReadPlan& plan,
                  bool reversed, const Selection& sel, const GroupBy& group, const Limits& limits,
                  const SelectContext& ctx, ResultSet* result, uint64_t* tombstones, uint64_t* rows_read) {
  const TableSchema& t = *table;
  const uint8_t read_kind = plan.kind == ReadPlan::Kind::kPartitions ? 0 : 1;
  GroupPaging resume;
  PagingState state;
  if (ctx.paging_state) {
    TESSERA_ASSIGN_OR_RETURN(resume, DecodeGroupPaging(*ctx.paging_state));
    TESSERA_ASSIGN_OR_RETURN(state, DecodePaging(resume.read, read_kind));
  }
  struct Chunk {
    PagingState start;                // the read's state before the chunk
    std::optional<std::string> end;   // and after it (none: the read is complete)
    size_t first_row;                 // its first row's index in `rows`
    uint64_t dropped;                 // rows of the previous page's last group it began with (not in `rows`)
  };
  std::vector<Chunk> chunks;
  std::vector<SourceRow> rows;
  bool skipping = !resume.last_group.empty();
  bool done = false;
  // The first guess: 4 rows per group.
  uint64_t chunk_rows = std::clamp<uint64_t>(limits.page == UINT64_MAX ? 1000 : limits.page * 4, 4, 1000);
  for (;;) {
    Limits read_limits;
    read_limits.page = chunk_rows;
    Executor exec(coordinator, table, plan, read_limits, reversed, /*keep_all=*/false, ctx);
    Chunk chunk{state, std::nullopt, rows.size(), 0};
    std::vector<SourceRow> got;
    TESSERA_RETURN_IF_ERROR(exec.Run(state, &got, &chunk.end));
    *tombstones += exec.tombstones();
    *rows_read += got.size();
    for (auto& r : got) {
      if (skipping && GroupKey(t, group, r) == resume.last_group) {
        ++chunk.dropped;
        continue;
      }
      skipping = false;
      rows.push_back(std::move(r));
    }
    if (chunk.end) {
      TESSERA_ASSIGN_OR_RETURN(state, DecodePaging(*chunk.end, read_kind));
    } else {
      done = true;
    }
    chunks.push_back(std::move(chunk));

    // Which groups the page takes, as FoldGroups counts them.
    const auto groups = GroupRows(t, group, rows);
    std::vector<size_t> emitted;
    uint64_t counted = resume.groups_returned;
    uint64_t in_partition = 0, last_in_partition = resume.groups_in_partition;
    std::string last_partition = resume.last_partition;
    bool have_last = !resume.last_group.empty();
    std::optional<size_t> boundary;  // the first group of the next page
    bool finished = false;           // LIMIT reached
    size_t complete = 0;             // groups known complete before the one still being read
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::string partition = PartitionOf(t, rows[groups[g].first]);
      in_partition = have_last && partition == last_partition ? last_in_partition + 1 : 0;
      if (in_partition < limits.per_partition && emitted.size() >= limits.page) {
        boundary = g;
        break;
      }
      if (!done && g + 1 == groups.size()) break;  // its rows may go on in the next chunk
      ++complete;
      have_last = true;
      last_partition = partition;
      last_in_partition = in_partition;
      if (in_partition >= limits.per_partition) continue;
      emitted.push_back(g);
      if (++counted >= limits.limit) {
        finished = true;
        break;
      }
    }
    if (!boundary && !finished && !done) {
      // Read on: as many rows as the groups still wanted should hold, by the
      // rows per group so far, and a single row once the group being read
      // should be whole (it shows whether the next group begins).
      const uint64_t wanted = limits.page == UINT64_MAX ? UINT64_MAX : limits.page - emitted.size();
      const size_t tail = groups.empty() ? 0 : rows.size() - groups[complete].first;
      if (complete == 0) {
        // Not one group whole yet: a single row shows whether the first one
        // ends here; if it did not, as many rows again as it has.
        chunk_rows = chunk_rows > 1 ? 1 : std::clamp<uint64_t>(tail, 4, 10'000);
      } else {
        const uint64_t per_group = (groups[complete].first + complete - 1) / complete;  // rounded up
        const uint64_t estimate = wanted == UINT64_MAX ? 10'000 : per_group * wanted;
        chunk_rows = estimate > tail ? std::min<uint64_t>(estimate - tail, 10'000) : 1;
      }
      // Replayed (DeferredRead::replay), every chunk costs a run over all the
      // rows before it: chunks at least as large as those rows keep the runs
      // of a page logarithmic in its rows, and their work linear.
      if (ctx.deferred != nullptr && ctx.deferred->replay && chunk_rows > 1) {
        chunk_rows = std::max<uint64_t>(chunk_rows, rows.size());
      }
      continue;
    }
    Status failure;
    for (size_t g : emitted) {
      const auto [begin, end] = groups[g];
      std::span<const SourceRow> members(rows.data() + begin, end - begin);
      result->rows.push_back(sel.is_aggregate() ? sel.Aggregate(members, &failure)
                                                : sel.Project(rows[begin], ctx.bind.now_micros, ctx.bind.rng, &failure));
    }
    TESSERA_RETURN_IF_ERROR(failure);
    if (!boundary) return Status::OK();  // LIMIT reached or every row read: the last page
    // The read's state right after the last row before the boundary.
    const size_t last_row = groups[*boundary].first - 1;
    size_t c = chunks.size() - 1;
    while (chunks[c].first_row > last_row) --c;
    const size_t chunk_end = c + 1 < chunks.size() ? chunks[c + 1].first_row : rows.size();
    GroupPaging p;
    p.groups_returned = counted;
    p.groups_in_partition = last_in_partition;
    p.last_partition = last_partition;
    p.last_group = GroupKey(t, group, rows[last_row]);
    if (last_row + 1 == chunk_end && chunks[c].end) {
      p.read = *chunks[c].end;  // the chunk ended on it
    } else {
      Limits exact;
      exact.page = last_row + 1 - chunks[c].first_row + chunks[c].dropped;
      Executor again(coordinator, table, plan, exact, reversed, /*keep_all=*/false, ctx);
      std::vector<SourceRow> reread;
      std::optional<std::string> after;
      TESSERA_RETURN_IF_ERROR(again.Run(chunks[c].start, &reread, &after));
      *rows_read += reread.size();
      if (!after) return Status::OK();  // the rows after it were deleted meanwhile
      if (!reread.empty()) p.last_group = GroupKey(t, group, reread.back());
      p.read = *after;
    }
    result->paging_state = EncodeGroupPaging(p);
    return Status::OK();
  }
}

}  // namespace

Result<std::vector<ColumnSpec>> SelectColumns(const TableSchema& table, const SelectStatement& stmt,
                                              const UserFunctions* functions) {
  TESSERA_ASSIGN_OR_RETURN(Selection sel, Selection::Make(table, stmt, functions));
  if (stmt.json) {  // SELECT JSON answers one text column (RowsToJson)
    return std::vector<ColumnSpec>{ColumnSpec{table.keyspace, table.name, "[json]", CqlType::Scalar(TypeKind::kText)}};
  }
  return sel.columns();
}

// The rows of a SELECT (its JSON form aside).
static Result<ResultSet> SelectRows(Coordinator& coordinator, const VirtualTables* vt, const SelectStatement& s,
                                    const SelectContext& ctx);
static Status FinishPaxosBeforeRead(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table,
                                    const ReadPlan& plan, const SelectContext& ctx);
static Result<ResultSet> Finish(const TableSchema& table, const Selection& sel, const std::optional<GroupBy>& group,
                                const Limits& limits, uint64_t groups_before, const SelectContext& ctx,
                                std::vector<SourceRow> rows, ResultSet result);

namespace {

// SELECT JSON: each row becomes one "[json]" text cell holding an object of
// the selected columns, in selection order (Cassandra's Selection.rowToJson).
void RowsToJson(ResultSet* result) {
  // Each column's `"key": ` once, not once per row.
  std::vector<std::string> keys;
  for (size_t i = 0; i < result->columns.size(); ++i) {
    keys.push_back((i > 0 ? ", " : "") + ValueToJson(CqlType::Scalar(TypeKind::kText),
                                                     JsonColumnKey(result->columns[i].name)) + ": ");
  }
  std::vector<std::vector<std::optional<std::string>>> rows;
  rows.reserve(result->rows.size());
  for (const auto& row : result->rows) {
    std::string object = "{";
    for (size_t i = 0; i < result->columns.size() && i < row.size(); ++i) {
      object += keys[i] + ValueToJson(result->columns[i].type, row[i]);
    }
    rows.push_back({object + "}"});
  }
  const ColumnSpec& first = result->columns.front();
  result->columns = {ColumnSpec{first.keyspace, first.table, "[json]", CqlType::Scalar(TypeKind::kText)}};
  result->rows = std::move(rows);
}

}  // namespace

Result<ResultSet> ExecuteSelect(Coordinator& coordinator, const VirtualTables* vt, const SelectStatement& s,
                                const SelectContext& ctx) {
  TESSERA_ASSIGN_OR_RETURN(ResultSet result, SelectRows(coordinator, vt, s, ctx));
  if (s.json && !result.columns.empty()) RowsToJson(&result);
  return result;
}

bool FoldSelectStep(ResultSet step, int32_t page_size, SelectContext* ctx, std::optional<ResultSet>* page) {
  DeferredRead* deferred = ctx->deferred;
  const bool paused = deferred != nullptr && deferred->paused;
  if (!*page) {
    *page = std::move(step);
  } else {
    ResultSet& p = **page;
    p.rows.insert(p.rows.end(), std::make_move_iterator(step.rows.begin()), std::make_move_iterator(step.rows.end()));
    p.warnings.insert(p.warnings.end(), std::make_move_iterator(step.warnings.begin()),
                      std::make_move_iterator(step.warnings.end()));
    p.paging_state = std::move(step.paging_state);
  }
  const ResultSet& p = **page;
  if (!paused || !p.paging_state) return false;
  if (page_size > 0 && p.rows.size() >= static_cast<size_t>(page_size)) return false;
  DeferredRead next;
  next.earlier_tombstones = deferred->earlier_tombstones;
  next.earlier_rows = deferred->earlier_rows;
  *deferred = std::move(next);
  ctx->paging_state = p.paging_state;
  if (page_size > 0) ctx->page_size = page_size - static_cast<int32_t>(p.rows.size());
  ctx->defer_read = true;
  return true;
}

static Result<ResultSet> SelectRows(Coordinator& coordinator, const VirtualTables* vt, const SelectStatement& s,
                                    const SelectContext& ctx) {
  Database& db = coordinator.database();
  const std::string ks = s.table.keyspace.empty() ? ctx.keyspace : s.table.keyspace;
  std::shared_ptr<const TableSchema> table = vt ? vt->Find(ks, s.table.name) : nullptr;
  const bool is_virtual = table != nullptr;
  if (!table) {
    TESSERA_ASSIGN_OR_RETURN(table, ResolveTable(db, s.table, ctx.keyspace));
  }
  TESSERA_ASSIGN_OR_RETURN(Selection sel, Selection::Make(*table, s, ctx.functions));
  if (s.distinct) {
    for (const auto& c : sel.columns()) {
      const ColumnDef* def = table->FindColumn(c.name);
      if (!def || (def->kind != ColumnKind::kPartitionKey && def->kind != ColumnKind::kStatic)) {
        return Status::InvalidArgument("SELECT DISTINCT queries must only request partition key columns and/or static columns (not " + c.name + ")");
      }
    }
  }
  std::optional<GroupBy> group;
  if (!s.group_by.empty()) {
    if (is_virtual) return Status::InvalidArgument("GROUP BY is not supported on system tables");
    TESSERA_ASSIGN_OR_RETURN(group, MakeGroupBy(*table, s));
  }
  Limits limits;
  TESSERA_ASSIGN_OR_RETURN(limits.limit, BindLimit(s.limit, ctx.bind, "LIMIT"));
  TESSERA_ASSIGN_OR_RETURN(limits.per_partition, BindLimit(s.per_partition_limit, ctx.bind, "PER PARTITION LIMIT"));
  if (s.distinct) limits.per_partition = 1;
  // LIMIT bounds the rows returned, as in Cassandra: an aggregate without
  // GROUP BY returns one row (LIMIT is at least 1), folded from every row read.
  if (sel.is_aggregate() && !group) limits.limit = UINT64_MAX;
  // An aggregate without GROUP BY is one row; with it, a page holds page_size groups.
  if (ctx.page_size > 0 && (!sel.is_aggregate() || group)) limits.page = static_cast<uint64_t>(ctx.page_size);

  ResultSet result;
  result.columns = sel.columns();
  std::vector<SourceRow> rows;
  uint64_t groups_before = 0;  // GROUP BY: groups returned by earlier pages
  if (is_virtual) {
    // System tables are small: filter all rows in memory (their restrictions
    // need no ALLOW FILTERING), then page by position.
    TESSERA_ASSIGN_OR_RETURN(ReadPlan plan, PlanRead(*table, s.where, /*allow_filtering=*/true, ctx.bind));
    TESSERA_ASSIGN_OR_RETURN(auto all, plan.kind == ReadPlan::Kind::kPartitions
                                           ? vt->PartitionRows(*table, plan.partition_keys)
                                           : vt->Rows(*table));
    for (auto& r : all) {
      bool keep = MatchesAll(*table, plan, r);
      if (keep && plan.kind == ReadPlan::Kind::kPartitions) keep = WithinClustering(*table, plan, r);
      if (keep && plan.kind == ReadPlan::Kind::kPartitions) {
        auto pk = table->PartitionKey();
        keep = std::any_of(plan.partition_keys.begin(), plan.partition_keys.end(), [&](const auto& key) {
          for (size_t i = 0; i < pk.size(); ++i) {
            if (r.values[static_cast<size_t>(pk[i] - table->columns.data())] != key[i]) return false;
          }
          return true;
        });
      }
      if (keep) rows.push_back(std::move(r));
    }
    uint64_t start = 0;
    if (ctx.paging_state) {
      TESSERA_ASSIGN_OR_RETURN(PagingState p, DecodePaging(*ctx.paging_state, 2));
      start = p.rows_so_far;
    }
    uint64_t end = std::min<uint64_t>(rows.size(), std::min(limits.limit, start + limits.page));
    if (end < rows.size() && end < limits.limit) {
      PagingState p;
      p.rows_so_far = end;
      result.paging_state = EncodePaging(p, 2);
    }
    rows = std::vector<SourceRow>(rows.begin() + static_cast<long>(std::min<uint64_t>(start, rows.size())),
                                  rows.begin() + static_cast<long>(std::max(start, end)));
  } else if (s.ann) {
    if (group || sel.is_aggregate()) return Status::InvalidArgument("ANN ordering can not be run with aggregation");
    TESSERA_RETURN_IF_ERROR(RunAnnSearch(coordinator, table, s, limits.limit, ctx.bind, ctx.consistency, &rows));
  } else {
    TESSERA_ASSIGN_OR_RETURN(auto via_index, ChooseIndex(db, *table, s.where, s.allow_filtering, ctx.bind));
    if (via_index && !via_index->within_partitions) {
      if (!s.order_by.empty()) return Status::InvalidArgument("ORDER BY with 2ndary indexes is not supported.");
      PagingState state;
      if (ctx.paging_state) {
        TESSERA_ASSIGN_OR_RETURN(state, DecodePaging(*ctx.paging_state, group ? kGroupPaging : 4));
      }
      if (group) {
        groups_before = state.rows_so_far;
        state = PagingState{};
      }
      IndexScanLimits scan_limits;
      if (!group) {
        scan_limits.limit = limits.limit;
        scan_limits.per_partition = limits.per_partition;
        scan_limits.page = limits.page;
      }
      scan_limits.keep_all = sel.is_aggregate() || group.has_value();
      DeferredRead* deferred = ctx.deferred;
      if (deferred != nullptr && ctx.defer_read && !deferred->table) {  // the caller reads the page (DeferredIndexScan)
        deferred->table = table;
        deferred->index_scan = DeferredIndexScan{*via_index, scan_limits, state, std::nullopt};
        return Status::Busy("index scan deferred to the caller");
      }
      if (deferred != nullptr && !ctx.defer_read && deferred->table == table && deferred->index_scan &&
          deferred->index_scan->result) {
        Result<IndexScanResult> page = std::move(*deferred->index_scan->result);
        deferred->index_scan->result.reset();  // taken
        if (!page.ok()) return page.status();
        rows = std::move(page->rows);
        result.paging_state = std::move(page->next);
      } else {
        TESSERA_RETURN_IF_ERROR(RunIndexScan(coordinator, table, *via_index, scan_limits, state, ctx.bind, ctx.consistency,
                                             &rows, &result.paging_state));
      }
      return Finish(*table, sel, group, limits, groups_before, ctx, std::move(rows), std::move(result));
    }
    ReadPlan plan;
    if (via_index) {
      plan = std::move(via_index->plan);
    } else {
      TESSERA_ASSIGN_OR_RETURN(plan, PlanRead(*table, s.where, s.allow_filtering, ctx.bind));
    }
    TESSERA_ASSIGN_OR_RETURN(bool reversed, Reversed(*table, s, plan));
    if (ctx.consistency.level == ConsistencyLevel::kSerial || ctx.consistency.level == ConsistencyLevel::kLocalSerial) {
      TESSERA_RETURN_IF_ERROR(FinishPaxosBeforeRead(coordinator, table, plan, ctx));
    }
    if (group) {  // pages of groups, each read from where the last one ended (PageGroups)
      uint64_t tombstones = 0, rows_read = 0;
      TESSERA_RETURN_IF_ERROR(
          PageGroups(coordinator, table, plan, reversed, sel, *group, limits, ctx, &result, &tombstones, &rows_read));
      TESSERA_RETURN_IF_ERROR(CheckTombstones(db, *table, tombstones, rows_read, ctx, &result));
      return result;
    }
    PagingState state;
    uint8_t kind = plan.kind == ReadPlan::Kind::kPartitions ? 0 : 1;
    if (ctx.paging_state) {
      TESSERA_ASSIGN_OR_RETURN(state, DecodePaging(*ctx.paging_state, kind));
    }
    Executor exec(coordinator, table, plan, limits, reversed, sel.is_aggregate(), ctx);
    TESSERA_RETURN_IF_ERROR(exec.Run(state, &rows, &result.paging_state));
    // A page read in steps (DeferredRead::paused) meets the guardrails once,
    // with what all its steps visited.
    uint64_t tombstones = exec.tombstones(), live_rows = rows.size();
    DeferredRead* steps = ctx.defer_read ? nullptr : ctx.deferred;
    if (steps != nullptr) {
      tombstones += steps->earlier_tombstones;
      live_rows += steps->earlier_rows;
    }
    if (steps != nullptr && steps->paused) {
      steps->earlier_tombstones = tombstones;
      steps->earlier_rows = live_rows;
    } else {
      TESSERA_RETURN_IF_ERROR(CheckTombstones(db, *table, tombstones, live_rows, ctx, &result));
    }
  }
  return Finish(*table, sel, group, limits, groups_before, ctx, std::move(rows), std::move(result));
}

// A read at SERIAL or LOCAL_SERIAL on a cluster first runs a Paxos prepare
// on its partition, which finishes any conditional write left in progress
// there and brings the replicas behind up to the last commit (Cassandra's
// readWithPaxos); the read itself then asks a quorum (the levels read as
// QUORUM and LOCAL_QUORUM). On one node conditional writes hold a lock
// while they run, so there is nothing to finish. A replayed run
// (DeferredRead::replay) leaves the prepare to its caller, as a read: it
// stops there until the caller has its outcome, and reads after it.
static Status FinishPaxosBeforeRead(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table,
                                    const ReadPlan& plan, const SelectContext& ctx) {
  if (!coordinator.database().cluster_tablets()) return Status::OK();
  if (plan.kind != ReadPlan::Kind::kPartitions || plan.partition_keys.size() != 1) {
    return Status::InvalidArgument("SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time");
  }
  const ConsistencyLevel serial = ctx.consistency.level;
  if (ctx.deferred != nullptr && ctx.deferred->replay) {
    ReplayedRead prepare;
    prepare.kind = ReplayedRead::Kind::kPaxos;
    prepare.table = table;
    prepare.partition_key = plan.partition_keys[0];
    prepare.serial = serial;
    if (const ReplayedRead* done = FindOrRecordRead(&ctx.deferred->replayed, std::move(prepare))) {
      return *done->paxos_result;
    }
    ctx.deferred->table = table;
    return Status::Busy("the Paxos prepare is replayed by the caller");
  }
  return coordinator.BeginPaxos(table, plan.partition_keys[0], serial, /*for_read=*/true).status();
}

// Groups, aggregates or projects the rows read.
static Result<ResultSet> Finish(const TableSchema& table, const Selection& sel, const std::optional<GroupBy>& group,
                                const Limits& limits, uint64_t groups_before, const SelectContext& ctx,
                                std::vector<SourceRow> rows, ResultSet result) {
  if (group) {
    result.paging_state.reset();
    Status failure;
    FoldGroups(table, sel, *group, rows, limits, groups_before, ctx, &result, &failure);
    TESSERA_RETURN_IF_ERROR(failure);
    return result;
  }
  if (sel.is_aggregate()) {
    Status failure;
    result.rows.push_back(sel.Aggregate(rows, &failure));
    TESSERA_RETURN_IF_ERROR(failure);
    result.paging_state.reset();
    return result;
  }
  result.rows.reserve(rows.size());
  Status failure;
  for (const auto& r : rows) result.rows.push_back(sel.Project(r, ctx.bind.now_micros, ctx.bind.rng, &failure));
  TESSERA_RETURN_IF_ERROR(failure);
  return result;
}

}  // namespace tessera::cql
