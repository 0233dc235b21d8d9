// RunIndexScanAsync (index_scan.h): an index scan's page read through the
// asynchronous reads of Database, driven by a loop that runs on whichever
// thread brings the answer it waited for.
#include <atomic>
#include <mutex>

#include "cql/executor/index_scan.h"
#include "cql/executor/index_scan_page.h"

namespace tessera::cql {
namespace {

// At most this many base rows are read at once.
constexpr size_t kMaxBaseReadsAtOnce = 128;

class AsyncIndexScan : public std::enable_shared_from_this<AsyncIndexScan> {
 public:
  AsyncIndexScan(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, IndexChoice choice,
                 const IndexScanLimits& limits, int64_t now_micros, const RequestConsistency& consistency,
                 IndexScanDone done)
      : coordinator_(coordinator), choice_(std::move(choice)), consistency_(consistency), done_(std::move(done)),
        page_(table, choice_, limits, now_micros, &rows_) {}

  void Begin(PagingState state) {
    if (Status s = page_.Start(std::move(state), &after_); !s.ok()) {
      Finish(std::move(s));
      return;
    }
    Resume();
  }

 private:
  // One entry of the index slice and the base rows it stands for.
  struct BaseRead {
    bool valid = false;  // a well-formed entry (IndexScanPage::Split)
    std::vector<std::string> pk, ck;
    std::vector<RowResult> rows;
    std::optional<RowResult> static_row;
    Status status;
  };

  // Runs Step until it waits or the page is done. An answer that arrives
  // while the loop runs (on this thread, inside a read call, or on another)
  // only marks `again_`, so that one thread at a time drives the scan and an
  // answer given inline does not nest a call.
  void Resume() {
    auto self = shared_from_this();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (running_) {
        again_ = true;
        return;
      }
      running_ = true;
    }
    for (;;) {
      try {
        while (Step()) {
        }
      } catch (const std::exception& e) {
        Finish(Status::Corruption(std::string("index scan failed: ") + e.what()));
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!again_) {
        running_ = false;
        return;
      }
      again_ = false;
    }
  }

  // One move of the scan; false when it waits for an answer or is done.
  bool Step() {
    if (finished_) return false;
    if (page_.Wanted() == 0) return Done();
    if (wave_asked_) {
      if (wave_pending_.load(std::memory_order_acquire) != 0) return false;
      wave_asked_ = false;
      for (size_t i = 0; i < wave_.size(); ++i) {
        BaseRead& read = wave_[i];
        if (!read.valid) continue;
        if (!read.status.ok()) return Fail(std::move(read.status));
        page_.Consume(entries_[next_entry_ + i], read.pk, read.rows, read.static_row);
        if (page_.Wanted() == 0) return Done();
      }
      next_entry_ += wave_.size();
      wave_.clear();
      return true;
    }
    if (slice_asked_) {
      if (!slice_answered_.load(std::memory_order_acquire)) return false;
      slice_asked_ = false;
      if (!slice_->ok()) return Fail(slice_->status());
      SliceResult& slice = **slice_;
      entries_ = std::move(slice.partition.rows);
      next_entry_ = 0;
      more_ = !slice.next_cursor.empty() && !entries_.empty();
      if (!entries_.empty()) after_ = ClusteringBound{entries_.back().clustering, false};
      have_entries_ = true;
      return true;
    }
    if (have_entries_ && next_entry_ < entries_.size()) {
      AskWave();
      return true;
    }
    if (have_entries_ && !more_) {  // the index partition is exhausted: the last page
      finished_ = true;
      Finish(Status::OK());
      return false;
    }
    AskSlice();
    return true;
  }

  bool Done() {
    page_.Pause(&next_);
    finished_ = true;
    Finish(Status::OK());
    return false;
  }

  bool Fail(Status s) {
    finished_ = true;
    Finish(std::move(s));
    return false;
  }

  void AskSlice() {
    slice_asked_ = true;
    slice_answered_.store(false, std::memory_order_relaxed);
    slice_.reset();
    coordinator_.ReadSliceAsync(choice_.backing, choice_.value, page_.IndexSlice(after_), consistency_,
                       [self = shared_from_this()](Result<SliceResult> slice) {
                         self->slice_ = std::move(slice);
                         self->slice_answered_.store(true, std::memory_order_release);
                         self->Resume();
                       });
  }

  // Reads the base rows of the next entries, as many as the page still
  // wants (a stale entry or a filtered row leaves it short: the next wave
  // reads on).
  void AskWave() {
    const auto n = static_cast<size_t>(std::min<uint64_t>(
        {entries_.size() - next_entry_, kMaxBaseReadsAtOnce, std::max<uint64_t>(1, page_.Wanted())}));
    wave_.assign(n, BaseRead{});
    size_t valid = 0;
    for (size_t i = 0; i < n; ++i) {
      BaseRead& read = wave_[i];
      read.valid = page_.Split(entries_[next_entry_ + i], &read.pk, &read.ck);
      if (read.valid) ++valid;
    }
    wave_asked_ = true;
    wave_pending_.store(valid, std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i) {
      if (wave_[i].valid) ReadBase(i, SliceRequest{});
    }
  }

  void Answered() {
    // acq_rel: the last answer's Resume sees every other read's rows.
    if (wave_pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) Resume();
  }

  // The base rows of wave_[i]: a static index's whole partition (slices
  // from `from` on), else the one row, as a one-row slice when the table
  // has static columns (the static row comes with it).
  void ReadBase(size_t i, SliceRequest from) {
    BaseRead& read = wave_[i];
    const auto& t = page_.table();
    if (!page_.static_index() && !t->HasStatic()) {
      coordinator_.ReadRowAsync(t, read.pk, read.ck, consistency_,
                       [self = shared_from_this(), i](Result<std::optional<RowResult>> row) {
                         BaseRead& r = self->wave_[i];
                         if (!row.ok()) r.status = row.status();
                         else if (*row) r.rows.push_back(std::move(**row));
                         self->Answered();
                       });
      return;
    }
    if (!page_.static_index()) {
      from.lower = from.upper = ClusteringBound{read.ck, true};
      from.limit = 1;
    }
    const bool first = from.cursor.empty();
    coordinator_.ReadSliceAsync(t, read.pk, from, consistency_,
                       [self = shared_from_this(), i, first](Result<SliceResult> slice) {
                         BaseRead& r = self->wave_[i];
                         if (!slice.ok()) {
                           r.status = slice.status();
                           self->Answered();
                           return;
                         }
                         if (first) r.static_row = std::move(slice->partition.static_row);
                         for (RowResult& row : slice->partition.rows) r.rows.push_back(std::move(row));
                         if (self->page_.static_index() && !slice->next_cursor.empty()) {
                           SliceRequest next;
                           next.cursor = slice->next_cursor;
                           self->ReadBase(i, std::move(next));  // the partition's next rows
                           return;
                         }
                         self->Answered();
                       });
  }

  void Finish(Status s) {
    IndexScanDone done = std::move(done_);
    if (!done) return;
    if (!s.ok()) {
      done(std::move(s));
      return;
    }
    done(IndexScanResult{std::move(rows_), std::move(next_)});
  }

  Coordinator& coordinator_;
  const IndexChoice choice_;  // before page_, which refers to it
  const RequestConsistency consistency_;
  IndexScanDone done_;
  std::vector<SourceRow> rows_;
  std::optional<std::string> next_;
  IndexScanPage page_;

  // Driven by the one thread in Resume's loop (running_).
  std::optional<ClusteringBound> after_;  // the next index slice starts past it
  bool finished_ = false;
  bool slice_asked_ = false;
  std::optional<Result<SliceResult>> slice_;  // written by the answer, before slice_answered_
  std::atomic<bool> slice_answered_{false};
  std::vector<RowResult> entries_;  // the index slice's entries
  size_t next_entry_ = 0;           // the first not yet consumed
  bool have_entries_ = false;
  bool more_ = false;  // entries may follow the slice's last
  bool wave_asked_ = false;
  std::vector<BaseRead> wave_;  // the base reads of entries_[next_entry_...]
  std::atomic<size_t> wave_pending_{0};

  std::mutex mu_;
  bool running_ = false, again_ = false;  // guarded by mu_
};

}  // namespace

void RunIndexScanAsync(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& table, IndexChoice choice,
                       const IndexScanLimits& limits, PagingState state, int64_t now_micros,
                       const RequestConsistency& consistency, IndexScanDone done) {
  auto scan = std::make_shared<AsyncIndexScan>(coordinator, table, std::move(choice), limits, now_micros, consistency,
                                               std::move(done));
  scan->Begin(std::move(state));
}

}  // namespace tessera::cql
