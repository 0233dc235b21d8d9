// ReadSubPartitionedRowAsync, ReadSubPartitionedSliceAsync and
// ScanSubPartitionedAsync (db/sub_partition_read.h): a partition-bucketed
// table's point reads, slices and scans as chains of callbacks, so that on a cluster they hold no thread
// while replicas answer (issue 28 item 1), as ReadRowAsync and
// ReadSliceAsync do for other tables.
//
// A point read asks the partition header (in sub-partition 0) and the row's
// key in the sub-partition of each count of the history together, one
// MultiGetAsync per tablet they are on. A slice asks the header and static
// row and the first window of every sub-partition that can hold rows of
// it, all at once; it then merges the windows' rows in clustering order as
// the blocking slice merges its iterators, and asks a sub-partition for its
// next window (from the last key it gave) only when the merge has used up
// the last one and that sub-partition has more: a row can be taken only
// once every sub-partition that may hold a smaller key has shown its head.
// A step's asks are answered on any threads; the last answer continues the
// read, and a step answered inline (a local replica) is continued by a loop,
// so that a long read of a local replica does not recurse. A scan finds
// each next partition with a window of one key and reads it as a slice.
#include <algorithm>
#include <memory>
#include <mutex>

#include "common/bytes.h"
#include "db/partition_rows.h"
#include "db/sub_partition_read.h"
#include "db/window_chain.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"

namespace tessera {
namespace {

// Counts the answers of one step; the last one (or the asker, when all came
// inline) continues. Thread safety: Start and Arrived from any thread.
class StepCount {
 public:
  // Starts a step of `asks` answers; the asker holds one more until Released.
  void Start(size_t asks) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = asks + 1;
  }
  // True for the call that ends the step (an answer's, or the asker's).
  bool Arrived() {
    std::lock_guard<std::mutex> lock(mu_);
    return --pending_ == 0;
  }

 private:
  std::mutex mu_;
  size_t pending_ = 0;
};

// ---- a point read ----

struct RowLookup : std::enable_shared_from_this<RowLookup> {
  std::shared_ptr<const TableSchema> table;
  int64_t now_micros = 0;
  std::string ck;                                        // the row's encoded clustering key
  std::vector<std::string> keys;                         // the header's, then the row's in each sub-partition
  std::vector<std::shared_ptr<TabletCounters>> counters; // of each key's tablet
  std::string current_position;                          // the row's sub-partition under the current count
  std::vector<std::string> values;
  std::vector<Status> statuses;
  StepCount step;
  RowDone done;

  Result<std::optional<RowResult>> Outcome() {
    PartitionHeader header;
    if (statuses[0].ok()) {
      counters[0]->bytes_read += values[0].size();
      TESSERA_RETURN_IF_ERROR(DecodePartitionHeader(values[0], &header));
    } else if (!statuses[0].IsNotFound()) {
      return statuses[0];
    }
    RowFragment row;
    bool found = false;
    for (size_t i = 1; i < keys.size(); ++i) {
      if (statuses[i].IsNotFound()) continue;
      TESSERA_RETURN_IF_ERROR(statuses[i]);
      counters[i]->CountReadBytes(now_micros, keys[i].size() + values[i].size());
      TESSERA_RETURN_IF_ERROR(FoldRowFragment(values[i], &row, &found));
    }
    counters[1]->sample.Add(now_micros, current_position, 1, /*write=*/false);
    if (!found) return std::optional<RowResult>();
    TESSERA_ASSIGN_OR_RETURN(auto live,
                             MaterializeFragment(*table, ck, false, std::move(row), header, Seconds(now_micros)));
    if (live) counters[1]->CountRead(now_micros, 1, 0);
    return live;
  }
};

// ---- a slice ----

// One sub-partition's part of a slice: its window of rows not merged yet.
struct SliceStream {
  std::string position;  // the sub-partition's position
  std::shared_ptr<Replica> replica;
  std::shared_ptr<TabletCounters> counters;
  std::string from, to;  // its keys of the slice, [from, to)
  std::vector<std::pair<std::string, std::string>> window;
  size_t next = 0;       // the first entry of `window` not merged
  bool more = true;      // keys may follow the last one asked
  std::string last_key;  // the last key of the last window; empty before the first
  uint64_t window_keys = kFirstWindowKeys;
  uint64_t rows = 0;     // rows it contributed, for the tablet's key sample

  bool Empty() const { return next == window.size(); }
  std::string_view ck() const { return std::string_view(window[next].first).substr(position.size() + 1); }
};

class SubPartitionSliceRead : public std::enable_shared_from_this<SubPartitionSliceRead> {
 public:
  SubPartitionSliceRead(const ReadContext& ctx, std::string logical, const SliceRequest& req, bool read_rows,
                        uint64_t rows_before, std::shared_ptr<Replica> home,
                        std::shared_ptr<TabletCounters> home_counters, std::vector<SliceStream> streams,
                        SliceResult out, SliceDone done)
      : table_(ctx.table),
        consistency_(ctx.consistency),
        now_micros_(ctx.now_micros),
        logical_(std::move(logical)),
        home_position_(SubPartitionPosition(logical_, 0)),
        reversed_(req.reversed),
        limit_(req.limit),
        read_rows_(read_rows),
        rows_before_(rows_before),
        home_(std::move(home)),
        home_counters_(std::move(home_counters)),
        streams_(std::move(streams)),
        out_(std::move(out)),
        done_(std::move(done)) {}

  // The header (with the static row) and every stream's first window, at once.
  void Start() {
    auto self = shared_from_this();
    step_.Start(1 + (read_rows_ ? streams_.size() : 0));
    std::vector<std::string> header_keys{home_position_ + static_cast<char>(KeyKind::kPartitionHeader)};
    if (table_->HasStatic()) header_keys.push_back(home_position_ + static_cast<char>(KeyKind::kStaticRow));
    home_->MultiGetAsync(std::move(header_keys), consistency_,
                         [self](std::vector<std::string> values, std::vector<Status> statuses) {
                           self->TakeHeader(values, statuses);
                           if (self->step_.Arrived()) self->Run();
                         });
    if (read_rows_) {
      for (size_t i = 0; i < streams_.size(); ++i) Ask(i);
    }
    if (step_.Arrived()) Run();
  }

 private:
  // Merges what the windows hold and asks for the next ones, until the
  // slice is read or a step waits for answers on other threads. Runs on one
  // thread at a time: the one that ended the last step.
  void Run() {
    for (;;) {
      std::vector<size_t> refill;
      Status error;
      {
        std::lock_guard<std::mutex> lock(mu_);
        error = error_;
      }
      if (!error.ok()) return done_(std::move(error));
      if (Status s = Merge(&refill); !s.ok()) return done_(std::move(s));
      if (refill.empty()) return Finish();
      step_.Start(refill.size());
      for (size_t i : refill) Ask(i);
      if (!step_.Arrived()) return;
    }
  }

  // Takes rows in the slice's order while every stream that may hold the
  // next one has shown its head; leaves in *refill the streams to ask
  // before going on (none: the slice is read).
  Status Merge(std::vector<size_t>* refill) {
    if (!read_rows_) return Status::OK();
    const uint32_t now = Seconds(now_micros_);
    while (out_.partition.rows.size() < limit_) {
      for (size_t i = 0; i < streams_.size(); ++i) {
        if (streams_[i].Empty() && streams_[i].more) refill->push_back(i);
      }
      if (!refill->empty()) return Status::OK();
      SliceStream* first = nullptr;  // the stream whose head comes first in the slice's order
      for (auto& st : streams_) {
        if (st.Empty()) continue;
        if (!first || (reversed_ ? st.ck() > first->ck() : st.ck() < first->ck())) first = &st;
      }
      if (!first) return Status::OK();
      const std::string ck(first->ck());
      RowFragment row;
      bool found = false;
      for (auto& st : streams_) {  // the same row in several sub-partitions: reconcile
        if (st.Empty() || st.ck() != ck) continue;
        const auto& [key, value] = st.window[st.next];
        st.counters->CountReadBytes(now_micros_, key.size() + value.size());
        TESSERA_RETURN_IF_ERROR(FoldRowFragment(value, &row, &found));
        ++st.next;
      }
      TESSERA_ASSIGN_OR_RETURN(auto live,
                               MaterializeFragment(*table_, ck, false, std::move(row), header_, now, &out_.tombstones_scanned));
      if (!live) continue;
      out_.partition.rows.push_back(std::move(*live));
      out_.row_keys.push_back(logical_ + static_cast<char>(KeyKind::kRow) + ck);
      first->counters->CountRead(now_micros_, 1, 0);
      ++first->rows;
    }
    out_.next_cursor = EncodePagingCursor(rows_before_ + out_.partition.rows.size(), out_.row_keys.back());
    return Status::OK();
  }

  // Asks stream i for its next window, for no more keys than the rows still wanted.
  void Ask(size_t i) {
    SliceStream& st = streams_[i];
    KeyWindowRead r;
    r.lower = st.from;
    r.upper = st.to;
    r.reverse = reversed_;
    if (st.last_key.empty()) {
      r.from = st.from;
      r.from_inclusive = true;
      r.from_end = reversed_;
    } else {
      r.from = st.last_key;
      r.from_inclusive = false;
    }
    const uint64_t wanted = limit_ - std::min<uint64_t>(limit_, out_.partition.rows.size());
    r.limit = static_cast<uint32_t>(std::clamp<uint64_t>(std::min(wanted, st.window_keys), 1, kMaxWindowKeys));
    st.window_keys = std::min<uint64_t>(kMaxWindowKeys, st.window_keys * 4);
    auto self = shared_from_this();
    st.replica->ReadWindowAsync(r, consistency_, [self, i](Result<KeyWindow> w) {
      self->TakeWindow(i, std::move(w));
      if (self->step_.Arrived()) self->Run();
    });
  }

  void TakeWindow(size_t i, Result<KeyWindow> w) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!w.ok()) {
      if (error_.ok()) error_ = w.status();
      return;
    }
    SliceStream& st = streams_[i];
    st.window = std::move(w->entries);
    st.next = 0;
    st.more = w->more && !st.window.empty();
    if (!st.window.empty()) st.last_key = st.window.back().first;
  }

  // The partition header and, for a table with static columns, the live static row.
  void TakeHeader(const std::vector<std::string>& values, const std::vector<Status>& statuses) {
    std::lock_guard<std::mutex> lock(mu_);
    Status s = HeaderOf(values, statuses);
    if (!s.ok() && error_.ok()) error_ = std::move(s);
  }
  Status HeaderOf(const std::vector<std::string>& values, const std::vector<Status>& statuses) {
    if (statuses.empty()) return Status::IOError("no answer for the partition header");
    if (!statuses[0].ok() && !statuses[0].IsNotFound()) return statuses[0];
    if (statuses[0].ok()) {
      home_counters_->bytes_read += values[0].size();
      TESSERA_RETURN_IF_ERROR(DecodePartitionHeader(values[0], &header_));
    }
    if (statuses.size() < 2 || statuses[1].IsNotFound()) return Status::OK();
    TESSERA_RETURN_IF_ERROR(statuses[1]);
    home_counters_->bytes_read += values[1].size();
    TESSERA_ASSIGN_OR_RETURN(out_.partition.static_row,
                             Materialize(*table_, {}, true, values[1], header_, Seconds(now_micros_)));
    return Status::OK();
  }

  void Finish() {
    bool sampled = false;
    for (const auto& st : streams_) {
      if (st.rows == 0) continue;
      st.counters->sample.Add(now_micros_, st.position, st.rows, /*write=*/false);
      sampled = true;
    }
    if (!sampled) home_counters_->sample.Add(now_micros_, home_position_, 1, /*write=*/false);
    done_(std::move(out_));
  }

  const std::shared_ptr<const TableSchema> table_;
  const RequestConsistency consistency_;
  const int64_t now_micros_;
  const std::string logical_, home_position_;
  const bool reversed_;
  const uint64_t limit_;  // rows
  const bool read_rows_;  // false: the header and static row alone
  const uint64_t rows_before_;  // rows of the partition earlier pages returned (a scan's resumed partition)
  const std::shared_ptr<Replica> home_;
  const std::shared_ptr<TabletCounters> home_counters_;
  std::vector<SliceStream> streams_;
  SliceResult out_;
  SliceDone done_;
  PartitionHeader header_;
  StepCount step_;
  std::mutex mu_;  // error_, and the answers' writes before the step's last
  Status error_;
};

// Starts the merged slice `req` of the partition at logical position
// `logical` (its key `pk` and token in `out`): what ReadSubPartitionedSliceAsync
// and the scan's partitions read. `count_partition`: a point or slice read
// (hot-partition tracking), not a scan's; `rows_before`: the rows of the
// partition earlier pages returned, counted in the cursor.
void StartMergedSlice(const ReadContext& ctx, std::string logical, const SliceRequest& req, bool count_partition,
                      uint64_t rows_before, SliceResult out, SliceDone done) {
  const TableSchema& t = *ctx.table;
  std::string lo, hi, resume;
  if (Status s = SliceBounds(t, logical, req, &lo, &hi); !s.ok()) return done(s);
  if (!req.cursor.empty()) {
    uint64_t ignored = 0;
    if (Status s = DecodePagingCursor(req.cursor, &ignored, &resume); !s.ok()) return done(s);
    // The cursor comes back from the client: it must lie within the slice it was made for.
    if (resume < lo || resume > hi) return done(Status::InvalidArgument("invalid paging cursor"));
  }
  const bool read_rows = lo < hi && req.limit > 0;
  if (read_rows && count_partition && ctx.count_partition_read) ctx.count_partition_read(logical);
  auto map = ctx.tablets();
  const Tablet& home = map->Find(SubPartitionPosition(logical, 0));
  std::vector<SliceStream> streams;
  if (read_rows) {
    for (uint32_t s : SubPartitionsOf(t, logical, req, lo)) {
      SliceStream st;
      st.position = SubPartitionPosition(logical, s);
      if (!SubPartitionSliceBounds(logical, st.position, lo, hi, resume, req.reversed, &st.from, &st.to)) continue;
      const Tablet& tablet = map->Find(st.position);
      st.replica = ctx.replica_of(tablet);
      st.counters = tablet.counters;
      streams.push_back(std::move(st));
    }
  }
  std::make_shared<SubPartitionSliceRead>(ctx, std::move(logical), req, read_rows, rows_before, ctx.replica_of(home),
                                          home.counters, std::move(streams), std::move(out), std::move(done))
      ->Start();
}

// ---- a scan ----

// A page of a scan: the logical partitions of the range in order, each the
// first key found from where the last one ended (a window of one key, tablet
// segment after tablet segment), then read as a merged slice with the
// page's LIMIT and PER PARTITION LIMIT pushed into it. Every partition comes
// with its static row, the one a page resumes inside too (as ScanRangeAsync's
// do). A step answered inline is continued by Loop's loop, not by a nested
// call, so a page of many partitions on a local replica does not recurse.
class SubPartitionScan : public std::enable_shared_from_this<SubPartitionScan> {
 public:
  SubPartitionScan(const ReadContext& ctx, const RangeRequest& req, RangeDone done)
      : ctx_(ctx), req_(req), done_(std::move(done)) {}

  void Start() {
    from_ = req_.range.begin;
    if (!req_.cursor.empty()) {
      Status s = DecodeSubPartitionedScanCursor(*ctx_.table, req_, &rows_in_partition_, &resume_key_, &resume_position_);
      if (!s.ok()) return done_(std::move(s));
      from_ = resume_position_;
    }
    Loop();
  }

 private:
  enum class Phase { kFind, kFound, kRead, kWaiting };

  // Runs steps until one waits for an answer on another thread; an answer
  // calls it again (and, inline, only marks that the loop goes on).
  void Loop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stepping_) {
        again_ = true;
        return;
      }
      stepping_ = true;
    }
    for (;;) {
      while (Step()) {
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!again_) {
        stepping_ = false;
        return;
      }
      again_ = false;
    }
  }

  // One step; true when the next one can run at once, false when it waits
  // for an answer (or the page is answered).
  bool Step() {
    switch (phase_) {
      case Phase::kFind:
        if (out_.rows >= req_.limit || from_ >= req_.range.end) return Finish();
        phase_ = Phase::kWaiting;
        FindPartition();
        return false;
      case Phase::kFound:
        return TakePartition();
      case Phase::kRead:
        return TakeSlice();
      case Phase::kWaiting:
        return false;
    }
    return false;
  }

  // The logical position of the first partition stored in [from_, end), into found_.
  void FindPartition() {
    auto self = shared_from_this();
    segment_begin_ = from_;
    ChainWindows(
        std::make_shared<WindowRelay>(),
        [self](Replica::WindowDone answer) {
          auto map = self->ctx_.tablets();
          const Tablet& tablet = map->Find(self->segment_begin_);
          self->segment_end_ = std::min(tablet.end, self->req_.range.end);
          KeyWindowRead r;
          r.lower = self->segment_begin_;
          r.upper = self->segment_end_;
          r.from = self->segment_begin_;
          r.limit = 1;
          self->ctx_.replica_of(tablet)->ReadWindowAsync(r, self->ctx_.consistency, std::move(answer));
        },
        [self](Result<KeyWindow> w) {
          if (w.ok() && w->entries.empty()) {
            self->segment_begin_ = self->segment_end_;
            if (self->segment_begin_ < self->req_.range.end) return true;  // the next tablet's segment
          }
          if (!w.ok()) {
            self->found_ = w.status();
          } else if (w->entries.empty()) {
            self->found_ = std::optional<std::string>();
          } else {
            auto n = LogicalPartitionPositionSize(*self->ctx_.table, w->entries[0].first);
            if (n.ok()) {
              self->found_ = std::optional<std::string>(w->entries[0].first.substr(0, *n));
            } else {
              self->found_ = n.status();
            }
          }
          self->phase_ = Phase::kFound;
          self->Loop();
          return false;
        });
  }

  // A partition found: read its slice, or pass it by.
  bool TakePartition() {
    if (!found_.ok()) return Fail(found_.status());
    if (!*found_) return Finish();
    logical_ = std::move(**found_);
    if (!PrefixSuccessor(logical_, &from_)) from_ = req_.range.end;
    phase_ = Phase::kFind;
    resumed_ = logical_ == resume_position_;
    if (resumed_ && static_cast<KeyKind>(resume_key_[logical_.size()]) == KeyKind::kStaticRow) return true;  // static only
    const uint64_t before = resumed_ ? rows_in_partition_ : 0;
    if (before >= req_.per_partition_limit) return true;
    SliceRequest slice;
    slice.limit = std::min<uint64_t>(req_.limit - out_.rows, req_.per_partition_limit - before);
    if (resumed_) slice.cursor = EncodePagingCursor(rows_in_partition_, resume_key_);
    SliceResult r;
    auto pk = DecodePartitionPosition(*ctx_.table, logical_);
    if (!pk.ok()) return Fail(pk.status());
    r.partition.partition_key = std::move(pk).value();
    if (ctx_.table->distribution == Distribution::kHash) {
      r.partition.token = DecodeToken(std::string_view(logical_).substr(4, 8));
    }
    phase_ = Phase::kWaiting;
    auto self = shared_from_this();
    StartMergedSlice(ctx_, logical_, slice, /*count_partition=*/false, before, std::move(r),
                     [self](Result<SliceResult> read) {
                       self->read_ = std::move(read);
                       self->phase_ = Phase::kRead;
                       self->Loop();
                     });
    return false;
  }

  // A partition's slice read: into the page.
  bool TakeSlice() {
    if (!read_.ok()) return Fail(read_.status());
    SliceResult& r = *read_;
    phase_ = Phase::kFind;
    out_.tombstones_scanned += r.tombstones_scanned;
    // A partition with its static row alone counts as one row; not the resumed one, returned before.
    const bool static_only = r.partition.rows.empty() && r.partition.static_row && !resumed_;
    if (r.partition.rows.empty() && !static_only) return true;
    out_.rows += static_only ? 1 : r.partition.rows.size();
    if (out_.rows >= req_.limit) {
      out_.next_cursor = static_only ? EncodePagingCursor(1, logical_ + static_cast<char>(KeyKind::kStaticRow))
                                     : r.next_cursor;
    }
    out_.partitions.push_back(std::move(r.partition));
    return true;
  }

  bool Finish() {
    phase_ = Phase::kWaiting;
    done_(std::move(out_));
    return false;
  }
  bool Fail(Status s) {
    phase_ = Phase::kWaiting;
    done_(std::move(s));
    return false;
  }

  const ReadContext ctx_;
  const RangeRequest req_;
  RangeDone done_;
  RangeResult out_;
  std::string from_;  // where the next partition is looked for
  std::string resume_key_, resume_position_;
  uint64_t rows_in_partition_ = 0;  // the cursor's rows of its partition
  std::string segment_begin_, segment_end_;
  Phase phase_ = Phase::kFind;
  Result<std::optional<std::string>> found_ = std::optional<std::string>();
  std::string logical_;  // the partition being read
  bool resumed_ = false;  // it is the one the page resumes inside
  Result<SliceResult> read_ = SliceResult{};
  std::mutex mu_;
  bool stepping_ = false, again_ = false;
};

}  // namespace

void ReadSubPartitionedRowAsync(const ReadContext& ctx, const std::vector<std::string>& pk,
                                const std::vector<std::string>& clustering, RowDone done) {
  const TableSchema& t = *ctx.table;
  if (clustering.size() != t.Clustering().size()) {
    return done(Status::InvalidArgument("a row of " + t.name + " needs all " + std::to_string(t.Clustering().size()) +
                                        " clustering components"));
  }
  auto lookup = std::make_shared<RowLookup>();
  lookup->table = ctx.table;
  lookup->now_micros = ctx.now_micros;
  std::string logical;
  Token token;
  if (Status s = EncodePartitionPosition(t, Views(pk), &logical, &token); !s.ok()) return done(s);
  if (Status s = EncodeClusteringPrefix(t, Views(clustering), &lookup->ck); !s.ok()) return done(s);
  if (ctx.count_partition_read) ctx.count_partition_read(logical);
  auto map = ctx.tablets();
  // The header, then the row where its partition's current count puts it, or where an earlier count did.
  std::vector<const Tablet*> tablets;
  const std::string home_position = SubPartitionPosition(logical, 0);
  lookup->keys.push_back(home_position + static_cast<char>(KeyKind::kPartitionHeader));
  tablets.push_back(&map->Find(home_position));
  const auto& counts = t.partition_buckets.CountsFor(EncodedPartitionKeyOf(t, logical));
  std::vector<uint32_t> looked;
  for (auto c = counts.rbegin(); c != counts.rend(); ++c) {
    const uint32_t sub = SubPartitionOf(lookup->ck, *c);
    if (std::find(looked.begin(), looked.end(), sub) != looked.end()) continue;
    looked.push_back(sub);
    const std::string position = SubPartitionPosition(logical, sub);
    if (lookup->current_position.empty()) lookup->current_position = position;
    lookup->keys.push_back(position + static_cast<char>(KeyKind::kRow) + lookup->ck);
    tablets.push_back(&map->Find(position));
  }
  for (const Tablet* tablet : tablets) lookup->counters.push_back(tablet->counters);
  lookup->values.resize(lookup->keys.size());
  lookup->statuses.resize(lookup->keys.size(), Status::NotFound(""));
  lookup->done = std::move(done);
  // One request per tablet, for its keys.
  std::vector<std::pair<const Tablet*, std::vector<size_t>>> groups;
  for (size_t i = 0; i < tablets.size(); ++i) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == tablets[i]; });
    if (g == groups.end()) g = groups.insert(groups.end(), {tablets[i], {}});
    g->second.push_back(i);
  }
  lookup->step.Start(groups.size());
  for (const auto& [tablet, indexes] : groups) {
    std::vector<std::string> keys;
    for (size_t i : indexes) keys.push_back(lookup->keys[i]);
    ctx.replica_of(*tablet)->MultiGetAsync(
        std::move(keys), ctx.consistency,
        [lookup, indexes = indexes](std::vector<std::string> values, std::vector<Status> statuses) {
          for (size_t j = 0; j < indexes.size(); ++j) {
            lookup->statuses[indexes[j]] =
                j < statuses.size() ? std::move(statuses[j]) : Status::IOError("no answer for a key");
            if (j < values.size()) lookup->values[indexes[j]] = std::move(values[j]);
          }
          if (lookup->step.Arrived()) lookup->done(lookup->Outcome());
        });
  }
  if (lookup->step.Arrived()) lookup->done(lookup->Outcome());
}

void ReadSubPartitionedSliceAsync(const ReadContext& ctx, const std::vector<std::string>& pk, const SliceRequest& req,
                                  SliceDone done) {
  SliceResult out;
  std::string logical;
  if (Status s = EncodePartitionPosition(*ctx.table, Views(pk), &logical, &out.partition.token); !s.ok()) return done(s);
  out.partition.partition_key = pk;
  StartMergedSlice(ctx, std::move(logical), req, /*count_partition=*/true, 0, std::move(out), std::move(done));
}

void ScanSubPartitionedAsync(const ReadContext& ctx, const RangeRequest& req, RangeDone done) {
  if (req.limit == 0 || req.range.begin >= req.range.end) return done(RangeResult{});
  std::make_shared<SubPartitionScan>(ctx, req, std::move(done))->Start();
}

}  // namespace tessera
