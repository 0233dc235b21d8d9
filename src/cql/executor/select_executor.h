// The storage-read loop of a SELECT (cql/executor/select_statement.cc):
// `Executor` walks the plan's partitions (one slice or row read at a time)
// or its token range (one range read at a time), filters each row
// (MatchesAll), applies PER PARTITION LIMIT, LIMIT and the page size, and
// pauses with a paging state (EncodePaging: kind 0 for partitions, 1 for a
// range) from which a later run resumes exactly after the last row emitted.
// On a cluster node it also defers its reads to the caller and takes their
// outcomes in a second run (DeferredRead, select_statement.h; issue 28
// item 1), and stops before a read a deferred one did not answer
// (DeferredRead::paused).
//
// Internal to the SELECT executor: included by select_statement.cc only.
// Thread safety: one Executor per run, on one thread; `db` is thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/executor/read_plan.h"
#include "cql/executor/select_statement.h"
#include "cql/executor/source_rows.h"
#include "db/database.h"
#include "keys/storage_key.h"

namespace tessera::cql::select_detail {

struct Limits {
  uint64_t limit = UINT64_MAX;                // LIMIT
  uint64_t per_partition = UINT64_MAX;        // PER PARTITION LIMIT
  uint64_t page = UINT64_MAX;                 // page size
};

class Executor {
 public:
  Executor(Coordinator& coordinator, std::shared_ptr<const TableSchema> t, const ReadPlan& plan, const Limits& limits,
           bool reversed, bool keep_all, const SelectContext& ctx)
      : coordinator_(coordinator), t_(std::move(t)), plan_(plan), limits_(limits), reversed_(reversed), keep_all_(keep_all),
        now_(static_cast<uint32_t>(ctx.bind.now_micros / 1'000'000)), consistency_(ctx.consistency),
        deferred_(ctx.deferred), defer_read_(ctx.defer_read) {}

  // Emits rows into out; sets *next when another page follows.
  Status Run(PagingState state, std::vector<SourceRow>* out, std::optional<std::string>* next) {
    state_ = state;
    out_ = out;
    return plan_.kind == ReadPlan::Kind::kPartitions ? RunPartitions(next) : RunRange(next);
  }

 private:
  uint64_t Wanted() const {
    uint64_t by_limit = limits_.limit - std::min(limits_.limit, state_.rows_so_far);
    uint64_t by_page = keep_all_ ? UINT64_MAX : limits_.page - std::min<uint64_t>(limits_.page, out_->size());
    return std::min(by_limit, by_page);
  }

  bool Emit(SourceRow row) {
    if (!MatchesAll(*t_, plan_, row)) return false;
    out_->push_back(std::move(row));
    ++state_.rows_so_far;
    ++state_.rows_in_partition;
    return true;
  }

  // The storage reads, or in a replayed run (DeferredRead::replay) their
  // outcomes as the caller read them. A first run (defer_read) that reaches
  // a read it does not defer turns to replay from there. A read not read
  // yet is recorded and answers empty, so that the run records the reads
  // that follow it too (the keys of an IN, the next partitions) up to
  // DeferredRead::kMaxReplayedMisses, then fails with Busy; such a run's
  // outcome is not used (`table` is set).
  bool Replaying() {
    if (deferred_ == nullptr) return false;
    if (!deferred_->replay && defer_read_ && !deferred_->table) deferred_->replay = true;
    return deferred_->replay;
  }
  // The read's outcome; nullptr when it is still to be read (recorded).
  const ReplayedRead* Replayed(ReplayedRead wanted) {
    wanted.table = t_;
    const ReplayedRead* read = FindOrRecordRead(&deferred_->replayed, std::move(wanted));
    if (read == nullptr) {
      deferred_->table = t_;
      ++misses_;
    }
    return read;
  }
  // Whether the run stops at the miss just recorded: once it has recorded as
  // many as the rows it still wants (each taken as empty gave none). A row
  // read gives one row at most, so fewer reads could not fill the page; a
  // slice may give more, and the reads after it were then made for nothing,
  // as Cassandra reads every partition of an IN.
  bool MissesFull() const {
    return misses_ >= std::min<uint64_t>(DeferredRead::kMaxReplayedMisses, std::max<uint64_t>(1, Wanted()));
  }
  Result<std::optional<RowResult>> StoreReadRow(const std::vector<std::string>& pk, const std::vector<std::string>& ck) {
    if (!Replaying()) return coordinator_.ReadRow(t_, pk, ck, consistency_);
    ReplayedRead wanted;
    wanted.kind = ReplayedRead::Kind::kRow;
    wanted.partition_key = pk;
    wanted.clustering = ck;
    if (const ReplayedRead* read = Replayed(std::move(wanted))) return *read->row;
    if (MissesFull()) return Status::Busy("reads replayed by the caller");
    return std::optional<RowResult>();
  }
  Result<SliceResult> StoreReadSlice(const std::vector<std::string>& pk, const SliceRequest& req) {
    if (!Replaying()) return coordinator_.ReadSlice(t_, pk, req, consistency_);
    ReplayedRead wanted;
    wanted.kind = ReplayedRead::Kind::kSlice;
    wanted.partition_key = pk;
    wanted.slice = req;
    if (const ReplayedRead* read = Replayed(std::move(wanted))) return *read->slice_result;
    if (MissesFull()) return Status::Busy("reads replayed by the caller");
    return SliceResult{};
  }
  Result<RangeResult> StoreScanRange(const RangeRequest& req) {
    if (!Replaying()) return coordinator_.ScanRange(t_, req, consistency_);
    ReplayedRead wanted;
    wanted.kind = ReplayedRead::Kind::kRange;
    wanted.range = req;
    if (const ReplayedRead* read = Replayed(std::move(wanted))) return *read->range_result;
    if (MissesFull()) return Status::Busy("reads replayed by the caller");
    return RangeResult{};
  }

  // One whole row: deferred to the caller, or taken from its read, or read
  // here (DeferredRead). Deferred only when every read of the statement is
  // a whole row known from the plan (no static row, no range, not resumed
  // inside a partition's slice): the second run, on the thread of a
  // replica's answer, must not wait for another read. The first run
  // defers them all, from the partition it is at.
  Result<std::optional<RowResult>> ReadRow(const std::vector<std::string>& pk, const std::vector<std::string>& ck) {
    if (deferred_ != nullptr) {
      if (DefersRows()) {
        deferred_->table = t_;
        for (size_t p = state_.partition; p < plan_.partition_keys.size(); ++p) {
          for (const auto& prefix : plan_.clustering_prefixes) {
            deferred_->rows.push_back(DeferredRow{plan_.partition_keys[p], prefix, std::nullopt, false});
          }
        }
        return Status::Busy("row reads deferred to the caller");
      }
      if (!defer_read_ && deferred_->table == t_) {
        for (auto& row : deferred_->rows) {
          if (row.taken || !row.result || row.partition_key != pk || row.clustering != ck) continue;
          row.taken = true;
          return *row.result;
        }
      }
    }
    return StoreReadRow(pk, ck);
  }

  // Whether this run defers its row reads (see ReadRow).
  bool DefersRows() const {
    if (deferred_ == nullptr || !defer_read_ || deferred_->table || t_->HasStatic() || plan_.lower || plan_.upper ||
        !state_.cursor.empty() || plan_.partition_keys.size() <= state_.partition) {
      return false;
    }
    const size_t rows = (plan_.partition_keys.size() - state_.partition) * plan_.clustering_prefixes.size();
    if (rows == 0 || rows > DeferredRead::kMaxDeferredRows) return false;
    return std::all_of(plan_.clustering_prefixes.begin(), plan_.clustering_prefixes.end(),
                       [&](const auto& prefix) { return prefix.size() == t_->Clustering().size(); });
  }

  // Whether this run defers its slice reads (DeferredRead): only when they
  // are the statement's only storage reads: at most kMaxDeferredSlices
  // partitions from here, one clustering prefix or range that is not one
  // whole row. Without a filter every row a slice returns is emitted, so
  // each returns all the statement wants of its partition; a filter may
  // leave one short, and the run that takes it then stops before a second
  // slice of that partition (PausesBeforeSlice); see Steppable for
  // aggregates. Their static rows come with them.
  bool DefersSlice() const {
    if (deferred_ == nullptr || !defer_read_ || deferred_->table || plan_.partition_keys.size() <= state_.partition ||
        plan_.partition_keys.size() - state_.partition > DeferredRead::kMaxDeferredSlices ||
        plan_.clustering_prefixes.size() != 1 || !Steppable()) {
      return false;
    }
    const bool one_row = !plan_.lower && !plan_.upper &&
                         plan_.clustering_prefixes[0].size() == t_->Clustering().size() && state_.cursor.empty();
    return !one_row || RowsAsSlices();
  }

  // Whether this run reads a whole row (a full clustering key) as a slice
  // of that one row rather than as a row: on a table with static columns
  // when reads may be deferred, since the slice brings the partition's
  // static row with the row in one replica request (ReadSliceAsync) where a
  // row read would need a second read for it, and so could not be deferred
  // (DefersRows). Both runs of a deferred read decide alike.
  bool RowsAsSlices() const { return deferred_ != nullptr && t_->HasStatic(); }

  bool Filtered() const { return !plan_.filters.empty() || plan_.uses_filtering; }

  // Whether a read this run defers can be followed by others in steps when
  // it falls short (PausesBeforeRead, PausesBeforeSlice): not when every row
  // is kept for an aggregate, which folds the rows of one run. Such a run
  // reads with no limit but PER PARTITION LIMIT, so only that, with a
  // filter, can leave a read short: it is not deferred.
  bool Steppable() const {
    return !keep_all_ || !Filtered() || limits_.per_partition == UINT64_MAX;
  }

  // In a run that took deferred slices: whether it stops before `req` of
  // partition `pk`, which no deferred slice answers (DeferredRead::paused),
  // since it may run on the thread of a replica's answer.
  bool PausesBeforeSlice(const std::vector<std::string>& pk, const SliceRequest& req) {
    if (deferred_ == nullptr || defer_read_ || deferred_->table != t_ || deferred_->slices.empty() || keep_all_) {
      return false;
    }
    for (const auto& slice : deferred_->slices) {
      if (!slice.taken && slice.result && slice.partition_key == pk && slice.request.cursor == req.cursor &&
          slice.request.reversed == req.reversed && slice.request.limit >= req.limit) {
        return false;
      }
    }
    deferred_->paused = true;
    return true;
  }

  // The deferred slice of partition `pk` (the second run), if there is one.
  DeferredSlice* TakenFrom(const std::vector<std::string>& pk) const {
    if (deferred_ == nullptr || defer_read_ || deferred_->table != t_) return nullptr;
    for (auto& slice : deferred_->slices) {
      if (slice.result && slice.partition_key == pk) return &slice;
    }
    return nullptr;
  }

  // One slice: deferred to the caller (with those of the partitions after
  // it), or taken from its read, or read here.
  Result<SliceResult> ReadSlice(const std::vector<std::string>& pk, const SliceRequest& req) {
    if (DefersSlice()) {
      deferred_->table = t_;
      for (size_t p = state_.partition; p < plan_.partition_keys.size(); ++p) {
        SliceRequest later = req;
        if (p != state_.partition) {  // from its start, as much as a partition may give
          later.cursor.clear();
          later.limit = std::min(Wanted(), limits_.per_partition);
        }
        deferred_->slices.push_back(DeferredSlice{plan_.partition_keys[p], std::move(later), std::nullopt, false});
      }
      return Status::Busy("slice reads deferred to the caller");
    }
    if (static_skipped_) return Status::Corruption("a static row was skipped for a slice read that was not deferred");
    DeferredSlice* slice = TakenFrom(pk);
    if (slice != nullptr && !slice->taken && slice->request.cursor == req.cursor &&
        slice->request.reversed == req.reversed && slice->request.limit >= req.limit) {
      if (!slice->result->ok()) {
        slice->taken = true;
        return slice->result->status();
      }
      SliceResult& read = **slice->result;
      const size_t rows = read.partition.rows.size();
      if (rows <= req.limit) {
        slice->taken = true;
        return read;
      }
      // Asked for more than this read wants (an IN's later partition, the
      // page filled by the ones before): cut where a read of req.limit stops.
      if (read.row_keys.size() == rows && req.limit > 0) {
        slice->taken = true;
        SliceResult cut = read;
        cut.partition.rows.resize(req.limit);
        cut.row_keys.resize(req.limit);
        cut.next_cursor = EncodePagingCursor(req.limit, cut.row_keys.back());
        return cut;
      }
    }
    return StoreReadSlice(pk, req);
  }

  // Whether this run defers its scan (DeferredRead): one range read at a
  // time (ScanRangeAsync brings every partition's static row, the resumed
  // one's too, so the loop reads none on its own). A filter may leave the
  // read short of the page; the run
  // that takes it then stops before the next one (PausesBeforeRead); see
  // Steppable for aggregates.
  bool DefersRange() const {
    return deferred_ != nullptr && defer_read_ && !deferred_->table && Steppable();
  }

  // In the run that took the deferred scan's page: whether it stops before a
  // further range read (DeferredRead::paused), since it may run on the
  // thread of a replica's answer, which must not wait for another.
  bool PausesBeforeRead() {
    if (deferred_ == nullptr || defer_read_ || deferred_->table != t_ || !range_taken_ || keep_all_) return false;
    deferred_->paused = true;
    return true;
  }

  // One range read: deferred to the caller, or taken from its read, or read here.
  Result<RangeResult> ScanRange(const RangeRequest& req) {
    if (DefersRange()) {
      deferred_->table = t_;
      deferred_->range = req;
      return Status::Busy("range read deferred to the caller");
    }
    if (deferred_ != nullptr && !defer_read_ && deferred_->table == t_ && deferred_->range_result && !range_taken_ &&
        deferred_->range->cursor == req.cursor && deferred_->range->limit == req.limit &&
        deferred_->range->per_partition_limit == req.per_partition_limit) {
      range_taken_ = true;
      return *deferred_->range_result;
    }
    return StoreScanRange(req);
  }

  std::optional<RowResult> StaticRow(const std::vector<std::string>& pk) {
    if (!t_->HasStatic()) return std::nullopt;
    // The deferred slice read brings it; this run ends at that read.
    if (DefersSlice()) {
      static_skipped_ = true;
      deferred_->static_skipped = true;
      return std::nullopt;
    }
    if (const DeferredSlice* slice = TakenFrom(pk)) {
      return slice->result->ok() ? (**slice->result).partition.static_row : std::nullopt;
    }
    SliceRequest req;
    req.limit = 0;
    auto r = StoreReadSlice(pk, req);
    return r.ok() ? r->partition.static_row : std::nullopt;
  }

  Status RunPartitions(std::optional<std::string>* next) {
    auto prefixes = plan_.clustering_prefixes;
    // IN values of clustering columns: in clustering order.
    std::vector<std::pair<std::string, std::vector<std::string>>> keyed;
    for (auto& p : prefixes) {
      std::string enc;
      std::vector<std::string_view> views(p.begin(), p.end());
      TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(*t_, views, &enc));
      keyed.emplace_back(std::move(enc), std::move(p));
    }
    std::sort(keyed.begin(), keyed.end());
    prefixes.clear();
    for (auto& [e, p] : keyed) prefixes.push_back(std::move(p));
    if (reversed_) std::reverse(prefixes.begin(), prefixes.end());
    const bool whole_partition = prefixes.size() == 1 && prefixes[0].empty() && !plan_.lower && !plan_.upper;

    for (; state_.partition < plan_.partition_keys.size(); ++state_.partition, state_.prefix = 0, state_.rows_in_partition = 0) {
      const auto& pk = plan_.partition_keys[state_.partition];
      std::optional<RowResult> static_row = StaticRow(pk);
      bool any_row = state_.rows_in_partition > 0 || state_.prefix > 0 || !state_.cursor.empty();
      for (; state_.prefix < prefixes.size(); ++state_.prefix) {
        // A full clustering key (or none in the table): one row, one lookup.
        if (!plan_.lower && !plan_.upper && prefixes[state_.prefix].size() == t_->Clustering().size() &&
            state_.cursor.empty()) {
          uint64_t want = std::min(Wanted(), limits_.per_partition - std::min(limits_.per_partition, state_.rows_in_partition));
          if (want == 0) break;
          std::optional<RowResult> row;
          if (RowsAsSlices()) {
            SliceRequest req;
            req.lower = req.upper = ClusteringBound{prefixes[state_.prefix], true};
            req.reversed = reversed_;
            req.limit = 1;
            if (PausesBeforeSlice(pk, req)) return Pause(next, 0);  // the caller reads on from here, in another step
            TESSERA_ASSIGN_OR_RETURN(SliceResult slice, ReadSlice(pk, req));
            tombstones_ += slice.tombstones_scanned;
            if (!slice.partition.rows.empty()) row = std::move(slice.partition.rows.front());
          } else {
            TESSERA_ASSIGN_OR_RETURN(row, ReadRow(pk, prefixes[state_.prefix]));
          }
          if (row) {
            any_row = true;
            Emit(MakeRow(*t_, pk, &*row, static_row ? &*static_row : nullptr, now_));
          }
          if (Wanted() == 0) return Pause(next, 0, /*advance_prefix=*/true, prefixes.size());
          continue;
        }
        for (;;) {
          uint64_t want = std::min(Wanted(), limits_.per_partition - std::min(limits_.per_partition, state_.rows_in_partition));
          if (want == 0) break;
          SliceRequest req;
          if (plan_.lower || plan_.upper) {
            req.lower = plan_.lower.value_or(ClusteringBound{prefixes[state_.prefix], true});
            req.upper = plan_.upper.value_or(ClusteringBound{prefixes[state_.prefix], true});
          } else {
            req.lower = req.upper = ClusteringBound{prefixes[state_.prefix], true};
          }
          req.reversed = reversed_;
          req.limit = want;
          req.cursor = state_.cursor;
          if (PausesBeforeSlice(pk, req)) return Pause(next, 0);  // the caller reads on from here, in another step
          TESSERA_ASSIGN_OR_RETURN(SliceResult slice, ReadSlice(pk, req));
          tombstones_ += slice.tombstones_scanned;
          for (const auto& row : slice.partition.rows) {
            any_row = true;
            Emit(MakeRow(*t_, pk, &row, static_row ? &*static_row : nullptr, now_));
          }
          state_.cursor = slice.next_cursor;
          if (state_.cursor.empty()) break;
          if (Wanted() == 0) return Pause(next, 0);
        }
        state_.cursor.clear();
        if (Wanted() == 0) return Pause(next, 0, /*advance_prefix=*/true, prefixes.size());
      }
      // A partition with only static values shows as one row (Cassandra).
      if (!any_row && whole_partition && static_row && Wanted() > 0) Emit(MakeRow(*t_, pk, nullptr, &*static_row, now_));
      if (Wanted() == 0 && state_.partition + 1 < plan_.partition_keys.size()) {
        ++state_.partition;
        state_.prefix = 0;
        state_.rows_in_partition = 0;
        return Pause(next, 0);
      }
    }
    return Status::OK();
  }

  // A fingerprint of a partition key (FNV-1a over its length-prefixed
  // components): which partition a range page's PER PARTITION LIMIT count
  // belongs to (PagingState::partition, unused otherwise by range pages).
  static uint64_t PartitionFingerprint(const std::vector<std::string>& pk) {
    uint64_t h = 14695981039346656037ull;
    auto mix = [&h](unsigned char b) {
      h ^= b;
      h *= 1099511628211ull;
    };
    for (const auto& part : pk) {
      for (int shift = 0; shift < 32; shift += 8) mix(static_cast<unsigned char>(part.size() >> shift));
      for (unsigned char b : part) mix(b);
    }
    return h | 1;  // never 0: a fresh state's "no partition yet"
  }

  Status RunRange(std::optional<std::string>* next) {
    // With a filter, PER PARTITION LIMIT counts the rows the filter keeps (as
    // Cassandra applies the limit after its row filter): the read returns
    // whole partitions and the rows beyond the limit are dropped here, the
    // count carried across reads and pages with the partition it is of.
    const bool count_here = Filtered() && limits_.per_partition != UINT64_MAX;
    for (;;) {
      uint64_t want = Wanted();
      if (want == 0) return Pause(next, 1);
      if (PausesBeforeRead()) return Pause(next, 1);  // the caller reads on from here, in another step
      RangeRequest req{plan_.range, want, count_here ? SIZE_MAX : limits_.per_partition, state_.cursor};
      const bool taken_before = range_taken_;
      TESSERA_ASSIGN_OR_RETURN(RangeResult page, ScanRange(req));
      // A deferred page came from ScanRangeAsync: a partition without a static row has none.
      const bool statics_complete = range_taken_ && !taken_before;
      tombstones_ += page.tombstones_scanned;
      for (const auto& p : page.partitions) {
        if (count_here) {
          const uint64_t fingerprint = PartitionFingerprint(p.partition_key);
          if (fingerprint != state_.partition) {
            state_.partition = fingerprint;
            state_.rows_in_partition = 0;
          }
        }
        auto room = [&] { return !count_here || state_.rows_in_partition < limits_.per_partition; };
        std::optional<RowResult> static_row = p.static_row;
        if (!static_row && !statics_complete) static_row = StaticRow(p.partition_key);
        if (p.rows.empty() && static_row && room()) Emit(MakeRow(*t_, p.partition_key, nullptr, &*static_row, now_));
        for (const auto& row : p.rows) {
          if (!room()) break;
          Emit(MakeRow(*t_, p.partition_key, &row, static_row ? &*static_row : nullptr, now_));
        }
      }
      state_.cursor = page.next_cursor;
      if (state_.cursor.empty()) return Status::OK();
    }
  }

  Status Pause(std::optional<std::string>* next, uint8_t kind, bool advance_prefix = false, size_t prefixes = 0) {
    if (state_.rows_so_far >= limits_.limit) return Status::OK();  // LIMIT reached: no more pages
    PagingState p = state_;
    if (advance_prefix) {
      ++p.prefix;
      if (p.prefix >= prefixes) {
        ++p.partition;
        p.prefix = 0;
        p.rows_in_partition = 0;
      }
      if (p.partition >= plan_.partition_keys.size()) return Status::OK();
    }
    *next = EncodePaging(p, kind);
    return Status::OK();
  }

 public:
  uint64_t tombstones() const { return tombstones_; }

 private:
  uint64_t tombstones_ = 0;
  size_t misses_ = 0;  // reads this run recorded unanswered (Replayed)
  Coordinator& coordinator_;
  std::shared_ptr<const TableSchema> t_;
  const ReadPlan& plan_;
  Limits limits_;
  bool reversed_;
  bool keep_all_;
  uint32_t now_;
  RequestConsistency consistency_;
  DeferredRead* deferred_;
  bool defer_read_;
  bool range_taken_ = false;  // the deferred scan's page, by the second run
  // StaticRow left it to the deferred slice read in this run (the slot's
  // static_skipped travels on into the second run, which must read).
  bool static_skipped_ = false;
  PagingState state_;
  std::vector<SourceRow>* out_ = nullptr;
};

}  // namespace tessera::cql::select_detail
