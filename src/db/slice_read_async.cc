// ReadSliceAsync (db/reader.h): one partition's slice read as a chain of
// callbacks, so that a SELECT of a slice holds no thread while replicas
// answer (issue 28 item 1). The partition header and the static row come
// with the first window of rows, in one read (KeyWindowRead::keys: one
// request per replica, one snapshot; the blocking ReadSlice asks for the
// header, then the static row, then its windows, one after the other); the
// windows chain as db/window_chain.h says. A window asks for no
// more keys than the rows still wanted (the slice's LIMIT reaches the
// replicas), and at most 512.
#include <algorithm>
#include <memory>

#include "db/partition_rows.h"
#include "db/reader.h"
#include "db/sub_partition_read.h"
#include "db/window_chain.h"
#include "keys/key_encoding.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"

namespace tessera {
namespace {

class SliceRead : public std::enable_shared_from_this<SliceRead> {
 public:
  SliceRead(const ReadContext& ctx, std::shared_ptr<Replica> replica, std::shared_ptr<TabletCounters> counters,
            std::string position, std::string lo, std::string hi, std::string resume_key, const SliceRequest& req,
            bool read_rows, SliceResult out, SliceDone done)
      : table_(ctx.table),
        replica_(std::move(replica)),
        counters_(std::move(counters)),
        consistency_(ctx.consistency),
        now_micros_(ctx.now_micros),
        position_(std::move(position)),
        lo_(std::move(lo)),
        hi_(std::move(hi)),
        resume_key_(std::move(resume_key)),
        reversed_(req.reversed),
        limit_(req.limit),
        read_rows_(read_rows),
        out_(std::move(out)),
        done_(std::move(done)) {}

  // The header (and static row) with the first window, in one read: one
  // request per replica asked, answered from one snapshot (issue 28 item
  // 2). Without rows wanted, the header alone.
  void Start() {
    auto self = shared_from_this();
    if (!read_rows_) {
      return replica_->MultiGetAsync(HeaderKeys(), consistency_,
                                     [self](std::vector<std::string> values, std::vector<Status> statuses) {
                                       self->Finish(self->TakeHeader(values, statuses));
                                     });
    }
    KeyWindowRead first = NextRead();
    first.keys = HeaderKeys();
    replica_->ReadWindowAsync(first, consistency_, [self](Result<KeyWindow> w) { self->FirstWindow(std::move(w)); });
  }

 private:
  // The partition header's key and, for a table with static columns, the static row's.
  std::vector<std::string> HeaderKeys() const {
    std::vector<std::string> keys{position_ + static_cast<char>(KeyKind::kPartitionHeader)};
    if (table_->HasStatic()) keys.push_back(position_ + static_cast<char>(KeyKind::kStaticRow));
    return keys;
  }

  // The first window, with the header's keys; a replica of an older release
  // answers without them, so they are read on their own then (not counted
  // as a request of their own where served: the window counted the read).
  void FirstWindow(Result<KeyWindow> window) {
    if (!window.ok()) return Finish(window.status());
    const size_t n = table_->HasStatic() ? 2 : 1;
    if (window->key_values.size() != n) {
      auto self = shared_from_this();
      RequestConsistency header_consistency = consistency_;
      header_consistency.internal = true;
      auto first = std::make_shared<KeyWindow>(std::move(window).value());
      return replica_->MultiGetAsync(
          HeaderKeys(), header_consistency,
          [self, first](std::vector<std::string> values, std::vector<Status> statuses) {
            if (Status s = self->TakeHeader(values, statuses); !s.ok()) return self->Finish(std::move(s));
            if (self->Take(std::move(*first))) self->ReadMore();
          });
    }
    std::vector<std::string> values(n);
    std::vector<Status> statuses(n, Status::NotFound(""));
    for (size_t i = 0; i < n; ++i) {
      if (!window->key_values[i]) continue;
      values[i] = std::move(*window->key_values[i]);
      statuses[i] = Status::OK();
    }
    if (Status s = TakeHeader(values, statuses); !s.ok()) return Finish(std::move(s));
    if (Take(std::move(window))) ReadMore();
  }

  // The partition header and, for a table with static columns, the live static row.
  Status TakeHeader(const std::vector<std::string>& values, const std::vector<Status>& statuses) {
    if (!statuses[0].ok() && !statuses[0].IsNotFound()) return statuses[0];
    if (statuses[0].ok()) {
      counters_->bytes_read += values[0].size();
      TESSERA_RETURN_IF_ERROR(DecodePartitionHeader(values[0], &header_));
    }
    if (statuses.size() < 2 || statuses[1].IsNotFound()) return Status::OK();
    TESSERA_RETURN_IF_ERROR(statuses[1]);
    counters_->bytes_read += values[1].size();
    TESSERA_ASSIGN_OR_RETURN(out_.partition.static_row,
                             Materialize(*table_, {}, true, values[1], header_, Seconds(now_micros_)));
    return Status::OK();
  }

  KeyWindowRead NextRead() {
    KeyWindowRead r;
    r.lower = lo_;
    r.upper = hi_;
    r.reverse = reversed_;
    if (last_key_.empty()) {  // the first window: from the cursor's key (not included), or the slice's start
      r.from = resume_key_.empty() ? lo_ : resume_key_;
      r.from_inclusive = resume_key_.empty();
      r.from_end = reversed_ && resume_key_.empty();
    } else {
      r.from = last_key_;
      r.from_inclusive = false;
    }
    const uint64_t wanted = limit_ - std::min<uint64_t>(limit_, out_.partition.rows.size());
    r.limit = static_cast<uint32_t>(std::clamp<uint64_t>(std::min<uint64_t>(wanted, window_keys_), 1, kMaxWindowKeys));
    window_keys_ = std::min<uint64_t>(kMaxWindowKeys, window_keys_ * 4);
    return r;
  }

  void ReadMore() {
    auto self = shared_from_this();
    ChainWindows(
        relay_,
        [self](Replica::WindowDone answer) {
          self->replica_->ReadWindowAsync(self->NextRead(), self->consistency_, std::move(answer));
        },
        [self](Result<KeyWindow> window) { return self->Take(std::move(window)); });
  }

  // The rows of one window; true when another window is needed.
  bool Take(Result<KeyWindow> window) {
    if (!window.ok()) {
      Finish(window.status());
      return false;
    }
    const TableSchema& t = *table_;
    const uint32_t now = Seconds(now_micros_);
    const size_t ck_offset = position_.size() + 1;
    for (auto& [key, value] : window->entries) {
      counters_->CountReadBytes(now_micros_, key.size() + value.size());
      auto row = Materialize(t, std::string_view(key).substr(ck_offset), false, value, header_, now,
                             &out_.tombstones_scanned);
      if (!row.ok()) {
        Finish(row.status());
        return false;
      }
      last_key_ = key;
      if (!*row) continue;
      out_.partition.rows.push_back(std::move(**row));
      out_.row_keys.push_back(key);
      counters_->CountRead(now_micros_, 1, 0);
      if (out_.partition.rows.size() == limit_) {
        out_.next_cursor = EncodePagingCursor(out_.partition.rows.size(), key);
        Finish(Status::OK());
        return false;
      }
    }
    if (!window->more || window->entries.empty()) {
      Finish(Status::OK());
      return false;
    }
    return true;
  }

  void Finish(Status s) {
    if (!s.ok()) return done_(std::move(s));
    counters_->sample.Add(now_micros_, position_, std::max<uint64_t>(1, out_.partition.rows.size()), /*write=*/false);
    done_(std::move(out_));
  }

  const std::shared_ptr<const TableSchema> table_;
  const std::shared_ptr<Replica> replica_;
  const std::shared_ptr<TabletCounters> counters_;
  const RequestConsistency consistency_;
  const int64_t now_micros_;
  const std::string position_, lo_, hi_, resume_key_;
  const bool reversed_;
  const uint64_t limit_;  // rows
  const bool read_rows_;  // false: the header and static row alone
  SliceResult out_;
  SliceDone done_;
  PartitionHeader header_;
  std::string last_key_;  // the last key taken; empty before the first window
  uint64_t window_keys_ = kFirstWindowKeys;
  std::shared_ptr<WindowRelay> relay_ = std::make_shared<WindowRelay>();
};

}  // namespace

void ReadSliceAsync(const ReadContext& ctx, const std::vector<std::string>& pk, const SliceRequest& req,
                    SliceDone done) {
  const TableSchema& t = *ctx.table;
  if (t.partition_buckets.enabled()) return ReadSubPartitionedSliceAsync(ctx, pk, req, std::move(done));
  SliceResult out;
  std::string position;
  if (Status s = EncodePartitionPosition(t, Views(pk), &position, &out.partition.token); !s.ok()) return done(s);
  out.partition.partition_key = pk;
  std::string lo, hi;
  if (Status s = SliceBounds(t, position, req, &lo, &hi); !s.ok()) return done(s);
  std::string resume_key;
  if (!req.cursor.empty()) {
    uint64_t ignored = 0;
    if (Status s = DecodePagingCursor(req.cursor, &ignored, &resume_key); !s.ok()) return done(s);
    // The cursor comes back from the client: it must lie within the slice it was made for.
    if (resume_key < lo || resume_key > hi) return done(Status::InvalidArgument("invalid paging cursor"));
  }
  const bool read_rows = lo < hi && req.limit > 0;
  if (read_rows && ctx.count_partition_read) ctx.count_partition_read(position);
  auto map = ctx.tablets();
  const Tablet& tablet = map->Find(position);
  std::make_shared<SliceRead>(ctx, ctx.replica_of(tablet), tablet.counters, std::move(position), std::move(lo), std::move(hi),
                              std::move(resume_key), req, read_rows, std::move(out), std::move(done))
      ->Start();
}

}  // namespace tessera
