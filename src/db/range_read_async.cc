// ScanRangeAsync (db/reader.h): a page of a range scan read as a chain of
// callbacks, so that a SELECT over a token range (or the whole table) holds
// no thread while replicas answer (issue 28 item 1). The blocking scan
// walks each tablet's iterator and reads every partition's header and
// static row with key reads of their own, one after the other; here each
// tablet segment is read in windows (Replica::ReadWindowAsync), whose keys
// include the partitions' headers and static rows (they sort before the
// rows), so a partition costs no read of its own. Only a page resumed
// inside a partition reads that partition's header (and static row) first,
// so every partition returned carries its static row, the resumed one too,
// as the blocking scan's do. A window asks
// for no more keys than the rows still wanted (at least 32), and at most
// 512; the windows chain as db/window_chain.h says.
#include <algorithm>
#include <memory>
#include <optional>

#include "db/bucketed_scan.h"
#include "db/partition_rows.h"
#include "db/reader.h"
#include "db/sub_partition_read.h"
#include "db/window_chain.h"
#include "keys/key_encoding.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"

namespace tessera {
namespace {

class RangeRead : public std::enable_shared_from_this<RangeRead> {
 public:
  RangeRead(const ReadContext& ctx, const RangeRequest& req, RangeDone done)
      : ctx_(ctx), req_(req), done_(std::move(done)), now_(Seconds(ctx.now_micros)) {}

  void Start() {
    pos_ = req_.range.begin;
    if (!req_.cursor.empty()) {
      if (Status s = DecodePagingCursor(req_.cursor, &rows_in_partition_, &resume_key_); !s.ok()) return done_(s);
      // The cursor comes back from the client: it must be a key of this table within the range it
      // was made for, or the scan would start elsewhere (another table's keys, read with this schema).
      auto n = PartitionPositionSize(*ctx_.table, resume_key_);
      if (!n.ok() || resume_key_ < req_.range.begin || resume_key_ >= req_.range.end) {
        return done_(Status::InvalidArgument("invalid paging cursor"));
      }
      pos_ = resume_key_;
      from_inclusive_ = false;
      resumed_position_ = resume_key_.substr(0, *n);
      // The resumed partition's header and static row sort before the
      // cursor: read them first, so that its rows come with their static
      // values as every other partition's do.
      auto self = shared_from_this();
      auto map = ctx_.tablets();
      std::vector<std::string> keys = {resumed_position_ + static_cast<char>(KeyKind::kPartitionHeader)};
      if (ctx_.table->HasStatic()) keys.push_back(resumed_position_ + static_cast<char>(KeyKind::kStaticRow));
      ctx_.replica_of(map->Find(resumed_position_))->MultiGetAsync(
          std::move(keys), ctx_.consistency, [self](std::vector<std::string> values, std::vector<Status> statuses) {
            Status s = statuses[0];
            if (s.ok()) s = DecodePartitionHeader(values[0], &self->resumed_header_);
            if (!s.ok() && !s.IsNotFound()) return self->done_(std::move(s));
            if (statuses.size() > 1) {
              if (statuses[1].ok()) {
                auto row = Materialize(*self->ctx_.table, {}, true, values[1], self->resumed_header_, self->now_);
                if (!row.ok()) return self->done_(row.status());
                self->resumed_static_ = std::move(*row);
              } else if (!statuses[1].IsNotFound()) {
                return self->done_(statuses[1]);
              }
            }
            self->ReadMore();
          });
      return;
    }
    ReadMore();
  }

 private:
  // The next window of the current tablet segment.
  // A segment keeps the tablet it started on (as the blocking scan keeps its
  // iterator) and the replica chosen for it, even if the tablet splits
  // meanwhile: a split keeps the replica set.
  KeyWindowRead NextRead() {
    if (segment_end_.empty()) {  // a new segment
      auto map = ctx_.tablets();
      const Tablet& tablet = map->Find(pos_);
      segment_begin_ = pos_;
      segment_end_ = std::min(tablet.end, req_.range.end);
      replica_ = ctx_.replica_of(tablet);
      counters_ = tablet.counters;
    }
    KeyWindowRead r;
    r.lower = segment_begin_;
    r.upper = segment_end_;
    r.from = pos_;
    r.from_inclusive = from_inclusive_;
    const uint64_t wanted = req_.limit - std::min<uint64_t>(req_.limit, out_.rows);
    r.limit = static_cast<uint32_t>(std::clamp<uint64_t>(std::min(wanted, window_keys_), kFirstWindowKeys,
                                                         kMaxWindowKeys));
    window_keys_ = std::min<uint64_t>(kMaxWindowKeys, window_keys_ * 4);
    return r;
  }

  void ReadMore() {
    auto self = shared_from_this();
    ChainWindows(
        relay_,
        [self](Replica::WindowDone answer) {
          KeyWindowRead read = self->NextRead();  // picks the segment's replica first
          self->replica_->ReadWindowAsync(read, self->ctx_.consistency, std::move(answer));
        },
        [self](Result<KeyWindow> window) { return self->Take(std::move(window)); });
  }

  // One window; true when another is needed.
  bool Take(Result<KeyWindow> window) {
    if (!window.ok()) {
      done_(window.status());
      return false;
    }
    for (auto& [key, value] : window->entries) {
      if (Status s = TakeKey(key, value); !s.ok()) {
        done_(std::move(s));
        return false;
      }
      if (done_scanning_) return Finish();
    }
    if (window->more && !window->entries.empty()) {
      pos_ = window->entries.back().first;
      from_inclusive_ = false;
      return true;
    }
    // This segment is read: the next tablet's, or the page's end.
    pos_ = segment_end_;
    from_inclusive_ = true;
    segment_end_.clear();
    window_keys_ = kFirstWindowKeys;
    if (pos_ >= req_.range.end) return Finish();
    return true;
  }

  Status TakeKey(const std::string& key, const std::string& value) {
    const TableSchema& t = *ctx_.table;
    if (current_position_.empty() || !std::string_view(key).starts_with(current_position_)) {
      FinishPartition();  // may reach the limit with a static-only partition
      if (done_scanning_) return Status::OK();
      TESSERA_ASSIGN_OR_RETURN(size_t n, PartitionPositionSize(t, key));
      current_position_.assign(key, 0, n);
      current_ = PartitionResult{};
      TESSERA_RETURN_IF_ERROR(DecodePartitionKey(t, key, &current_));
      counters_->sample.Add(ctx_.now_micros, current_position_, 1, /*write=*/false);
      resumed_ = !resumed_position_.empty() && current_position_ == resumed_position_;
      header_ = resumed_ ? resumed_header_ : PartitionHeader{};
      if (resumed_) current_.static_row = resumed_static_;
      if (!resumed_) rows_in_partition_ = 0;
      static_key_ = current_position_ + static_cast<char>(KeyKind::kStaticRow);
    }
    const auto kind = static_cast<KeyKind>(key[current_position_.size()]);
    if (kind == KeyKind::kPartitionHeader) {
      counters_->bytes_read += value.size();
      return DecodePartitionHeader(value, &header_);
    }
    if (kind == KeyKind::kStaticRow) {
      if (resumed_ || !t.HasStatic()) return Status::OK();
      counters_->bytes_read += value.size();
      TESSERA_ASSIGN_OR_RETURN(current_.static_row, Materialize(t, {}, true, value, header_, now_));
      return Status::OK();
    }
    if (rows_in_partition_ >= req_.per_partition_limit) return Status::OK();  // the rest of this partition
    counters_->CountReadBytes(ctx_.now_micros, key.size() + value.size());
    TESSERA_ASSIGN_OR_RETURN(auto row, Materialize(t, std::string_view(key).substr(current_position_.size() + 1),
                                                   false, value, header_, now_, &out_.tombstones_scanned));
    if (row) {
      current_.rows.push_back(std::move(*row));
      counters_->CountRead(ctx_.now_micros, 1, 0);
      ++rows_in_partition_;
      Count(key);
    }
    return Status::OK();
  }

  void Count(std::string_view key) {
    ++out_.rows;
    if (out_.rows >= req_.limit) {
      done_scanning_ = true;
      out_.next_cursor = EncodePagingCursor(rows_in_partition_, key);
    }
  }

  void FinishPartition() {
    if (current_position_.empty()) return;
    // A resumed partition that has no rows left was returned before.
    const bool static_only = current_.rows.empty() && current_.static_row && !done_scanning_ && !resumed_;
    if (!current_.rows.empty() || static_only) {
      if (static_only) {
        ++rows_in_partition_;
        Count(static_key_);
      }
      out_.partitions.push_back(std::move(current_));
    }
    current_ = PartitionResult{};
    current_position_.clear();
  }

  bool Finish() {
    FinishPartition();
    done_(std::move(out_));
    return false;
  }

  const ReadContext ctx_;
  const RangeRequest req_;
  RangeDone done_;
  const uint32_t now_;
  RangeResult out_;
  std::string pos_;  // where the next window starts
  bool from_inclusive_ = true;
  std::string segment_begin_, segment_end_;  // the tablet segment being read; empty end: none yet
  std::shared_ptr<Replica> replica_;
  std::shared_ptr<TabletCounters> counters_;
  uint64_t window_keys_ = kFirstWindowKeys;
  std::string resume_key_, resumed_position_;
  PartitionHeader resumed_header_;
  std::optional<RowResult> resumed_static_;  // the resumed partition's static row
  std::string current_position_, static_key_;
  PartitionResult current_;
  PartitionHeader header_;
  bool resumed_ = false;
  uint64_t rows_in_partition_ = 0;
  bool done_scanning_ = false;
  std::shared_ptr<WindowRelay> relay_ = std::make_shared<WindowRelay>();
};

}  // namespace

void ScanRangeAsync(const ReadContext& ctx, const RangeRequest& req, RangeDone done) {
  if (ctx.table->buckets.enabled()) return ScanBucketsAsync(ctx, req, std::move(done));
  if (ctx.table->partition_buckets.enabled()) return ScanSubPartitionedAsync(ctx, req, std::move(done));
  ScanStorageRangeAsync(ctx, req, std::move(done));
}

void ScanStorageRangeAsync(const ReadContext& ctx, const RangeRequest& req, RangeDone done) {
  if (req.limit == 0 || req.range.begin >= req.range.end) return done(RangeResult{});
  std::make_shared<RangeRead>(ctx, req, std::move(done))->Start();
}

}  // namespace tessera
