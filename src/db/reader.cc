#include "db/reader.h"

#include <algorithm>

#include "common/bytes.h"
#include "db/bucketed_scan.h"
#include "db/partition_rows.h"
#include "db/sub_partition_read.h"
#include "keys/key_encoding.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"

namespace tessera {

std::string EncodePagingCursor(uint64_t rows_in_partition, std::string_view key) {
  std::string c(1, '\x01');
  PutVarint64(&c, rows_in_partition);
  c.append(key);
  return c;
}

Status DecodePagingCursor(std::string_view cursor, uint64_t* rows_in_partition, std::string* key) {
  ByteReader r(cursor);
  uint8_t version;
  if (!r.ReadByte(&version) || version != 1 || !r.ReadVarint64(rows_in_partition) || r.empty()) {
    return Status::InvalidArgument("invalid paging cursor");
  }
  key->assign(r.rest());
  return Status::OK();
}

KeyRange WholeTableRange(const TableSchema& t) { return {TablePrefix(t.id), TablePrefix(t.id + 1)}; }

KeyRange TokenRange(const TableSchema& t, Token start, bool start_inclusive, Token end, bool end_inclusive) {
  KeyRange r = WholeTableRange(t);
  const std::string prefix = TablePrefix(t.id);
  if (!(start == kMinToken && start_inclusive)) {
    if (!start_inclusive && start == kMaxToken) return {r.end, r.end};
    r.begin = prefix + EncodeToken(start_inclusive ? start : start + 1);
  }
  if (!(end == kMaxToken && end_inclusive)) {
    if (!end_inclusive && end == kMinToken) return {r.begin, r.begin};
    r.end = prefix + EncodeToken(end_inclusive ? end + 1 : end);
  }
  if (r.end < r.begin) r.end = r.begin;
  return r;
}

Result<KeyRange> PartitionKeyRange(const TableSchema& t, const std::vector<std::string>* start, bool start_inclusive,
                                   const std::vector<std::string>* end, bool end_inclusive) {
  KeyRange r = WholeTableRange(t);
  Token token;
  if (start) {
    std::string p;
    TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, Views(*start), &p, &token));
    p = LogicalKey(t, p);
    r.begin = p;
    if (!start_inclusive) PrefixSuccessor(p, &r.begin);
  }
  if (end) {
    std::string p;
    TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, Views(*end), &p, &token));
    p = LogicalKey(t, p);
    r.end = p;
    if (end_inclusive) PrefixSuccessor(p, &r.end);
  }
  if (r.end < r.begin) r.end = r.begin;
  return r;
}

namespace {

// What a row read looks up: the partition header (deletions) and the row,
// in one batched lookup.
struct RowKeys {
  std::string position;    // the partition's
  std::string header_key;
  std::string key;         // the row's
  size_t clustering_start = 0;  // where the clustering prefix starts in `key`
};

Result<RowKeys> RowKeysOf(const TableSchema& t, const std::vector<std::string>& pk, const std::vector<std::string>& ck) {
  if (ck.size() != t.Clustering().size()) {
    return Status::InvalidArgument("a row of " + t.name + " needs all " + std::to_string(t.Clustering().size()) +
                                   " clustering components");
  }
  RowKeys k;
  Token token;
  TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, Views(pk), &k.position, &token));
  k.key = k.position + static_cast<char>(KeyKind::kRow);
  k.clustering_start = k.key.size();
  TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, Views(ck), &k.key));
  k.header_key = k.position + static_cast<char>(KeyKind::kPartitionHeader);
  return k;
}

// The row from the lookup of RowKeysOf's keys (values and statuses in
// header, row order), counted in the tablet's load.
Result<std::optional<RowResult>> RowFromLookup(const TableSchema& t, TabletCounters& counters, int64_t now_micros,
                                               const RowKeys& k, const std::vector<std::string>& values,
                                               const std::vector<Status>& found) {
  PartitionHeader header;
  if (found[0].ok()) {
    TESSERA_RETURN_IF_ERROR(DecodePartitionHeader(values[0], &header));
  } else if (!found[0].IsNotFound()) {
    return found[0];
  }
  if (found[1].IsNotFound()) return std::optional<RowResult>();
  TESSERA_RETURN_IF_ERROR(found[1]);
  const std::string& value = values[1];
  counters.CountReadBytes(now_micros, k.key.size() + value.size() + (found[0].ok() ? values[0].size() : 0));
  TESSERA_ASSIGN_OR_RETURN(auto row, Materialize(t, std::string_view(k.key).substr(k.clustering_start), false, value,
                                                 header, Seconds(now_micros)));
  if (row) counters.CountRead(now_micros, 1, 0);
  counters.sample.Add(now_micros, k.position, 1, /*write=*/false);
  return row;
}

}  // namespace

Result<std::optional<RowResult>> ReadRow(const ReadContext& ctx, const std::vector<std::string>& pk,
                                         const std::vector<std::string>& ck) {
  if (ctx.table->partition_buckets.enabled()) return ReadSubPartitionedRow(ctx, pk, ck);
  TESSERA_ASSIGN_OR_RETURN(RowKeys k, RowKeysOf(*ctx.table, pk, ck));
  if (ctx.count_partition_read) ctx.count_partition_read(k.position);
  auto map = ctx.tablets();
  const Tablet& tablet = map->Find(k.position);
  std::vector<std::string> values;
  std::vector<Status> found;
  ctx.replica_of(tablet)->MultiGet({k.header_key, k.key}, &values, &found, ctx.consistency);
  return RowFromLookup(*ctx.table, *tablet.counters, ctx.now_micros, k, values, found);
}

void ReadRowAsync(const ReadContext& ctx, const std::vector<std::string>& pk, const std::vector<std::string>& ck,
                  RowDone done) {
  if (ctx.table->partition_buckets.enabled()) return ReadSubPartitionedRowAsync(ctx, pk, ck, std::move(done));
  auto keys = RowKeysOf(*ctx.table, pk, ck);
  if (!keys.ok()) return done(keys.status());
  if (ctx.count_partition_read) ctx.count_partition_read(keys->position);
  auto map = ctx.tablets();
  const Tablet& tablet = map->Find(keys->position);
  std::shared_ptr<Replica> replica = ctx.replica_of(tablet);
  std::vector<std::string> lookup{keys->header_key, keys->key};
  replica->MultiGetAsync(std::move(lookup), ctx.consistency,
                         [table = ctx.table, counters = tablet.counters, now = ctx.now_micros,
                          k = std::move(keys).value(), done = std::move(done)](std::vector<std::string> values,
                                                                               std::vector<Status> found) {
                           done(RowFromLookup(*table, *counters, now, k, values, found));
                         });
}

Result<SliceResult> ReadSlice(const ReadContext& ctx, const std::vector<std::string>& pk, const SliceRequest& req) {
  if (ctx.table->partition_buckets.enabled()) return ReadSubPartitionedSlice(ctx, pk, req);
  const TableSchema& t = *ctx.table;
  const uint32_t now = Seconds(ctx.now_micros);
  SliceResult out;
  std::string position;
  TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, Views(pk), &position, &out.partition.token));
  out.partition.partition_key = pk;
  std::string lo, hi;
  TESSERA_RETURN_IF_ERROR(SliceBounds(t, position, req, &lo, &hi));
  std::string resume_key;
  uint64_t ignored = 0;
  if (!req.cursor.empty()) {
    TESSERA_RETURN_IF_ERROR(DecodePagingCursor(req.cursor, &ignored, &resume_key));
    // The cursor comes back from the client: it must lie within the slice it was made for.
    if (resume_key < lo || resume_key > hi) return Status::InvalidArgument("invalid paging cursor");
  }

  auto map = ctx.tablets();
  const Tablet& tablet = map->Find(position);
  TabletCounters* counters = tablet.counters.get();
  const std::shared_ptr<Replica> replica = ctx.replica_of(tablet);
  PartitionHeader header;
  TESSERA_RETURN_IF_ERROR(LoadHeader(replica.get(), ctx.consistency, position, &header, counters));
  if (req.cursor.empty()) {
    TESSERA_ASSIGN_OR_RETURN(out.partition.static_row,
                             ReadStatic(t, replica.get(), ctx.consistency, position, header, now, counters));
  }
  if (lo >= hi || req.limit == 0) return out;
  if (ctx.count_partition_read) ctx.count_partition_read(position);

  auto it = replica->NewIterator(lo, hi, ctx.consistency);
  if (!req.reversed) {
    resume_key.empty() ? it->Seek(lo) : it->Seek(resume_key);
  } else {
    resume_key.empty() ? it->SeekToLast() : it->SeekForPrev(resume_key);
  }
  const size_t ck_offset = position.size() + 1;
  for (; it->Valid(); req.reversed ? it->Prev() : it->Next()) {
    if (!resume_key.empty() && it->key() == resume_key) continue;
    counters->CountReadBytes(ctx.now_micros, it->key().size() + it->value().size());
    TESSERA_ASSIGN_OR_RETURN(auto row, Materialize(t, it->key().substr(ck_offset), false, it->value(), header, now,
                                                   &out.tombstones_scanned));
    if (!row) continue;
    out.partition.rows.push_back(std::move(*row));
    counters->CountRead(ctx.now_micros, 1, 0);
    if (out.partition.rows.size() == req.limit) {
      out.next_cursor = EncodePagingCursor(out.partition.rows.size(), it->key());
      break;
    }
  }
  TESSERA_RETURN_IF_ERROR(it->status());
  counters->sample.Add(ctx.now_micros, position, std::max<uint64_t>(1, out.partition.rows.size()), /*write=*/false);
  return out;
}

namespace {

// State of a range scan across tablet segments.
class RangeScanner {
 public:
  RangeScanner(const ReadContext& ctx, const RangeRequest& req, RangeResult* out)
      : ctx_(ctx), t_(*ctx.table), req_(req), out_(out), now_(Seconds(ctx.now_micros)) {}

  Status Run() {
    std::string pos = req_.range.begin;
    if (!req_.cursor.empty()) {
      TESSERA_RETURN_IF_ERROR(DecodePagingCursor(req_.cursor, &rows_in_partition_, &resume_key_));
      // The cursor comes back from the client: it must be a key of this table within the range it
      // was made for, or the scan would start elsewhere (another table's keys, read with this schema).
      auto n = PartitionPositionSize(t_, resume_key_);
      if (!n.ok() || resume_key_ < req_.range.begin || resume_key_ >= req_.range.end) {
        return Status::InvalidArgument("invalid paging cursor");
      }
      pos = resume_key_;
      resumed_position_ = resume_key_.substr(0, *n);
    }
    while (!done_ && pos < req_.range.end) {
      auto map = ctx_.tablets();
      const Tablet& tablet = map->Find(pos);
      std::string seg_end = std::min(tablet.end, req_.range.end);
      TESSERA_RETURN_IF_ERROR(ScanSegment(tablet, pos, seg_end));
      pos = seg_end;
    }
    FinishPartition();
    return Status::OK();
  }

 private:
  Status ScanSegment(const Tablet& tablet, const std::string& begin, const std::string& end) {
    auto it = ctx_.replica_of(tablet)->NewIterator(begin, end, ctx_.consistency);
    it->Seek(begin);
    while (it->Valid() && !done_) {
      std::string_view key = it->key();
      if (!resume_key_.empty() && key == resume_key_) {
        it->Next();
        continue;
      }
      if (current_position_.empty() || !key.starts_with(current_position_)) {
        FinishPartition();  // may reach the limit with a static-only partition
        if (done_) break;
        TESSERA_RETURN_IF_ERROR(EnterPartition(tablet, key));
      }
      auto kind = static_cast<KeyKind>(key[current_position_.size()]);
      if (kind != KeyKind::kRow) {
        it->Next();
        continue;
      }
      if (rows_in_partition_ >= req_.per_partition_limit) {  // skip the rest of this partition
        std::string next;
        if (!PrefixSuccessor(current_position_, &next)) break;
        it->Seek(next);
        continue;
      }
      tablet.counters->CountReadBytes(ctx_.now_micros, key.size() + it->value().size());
      TESSERA_ASSIGN_OR_RETURN(auto row, Materialize(t_, key.substr(current_position_.size() + 1), false,
                                                     it->value(), header_, now_, &out_->tombstones_scanned));
      if (row) {
        current_.rows.push_back(std::move(*row));
        tablet.counters->CountRead(ctx_.now_micros, 1, 0);
        ++rows_in_partition_;
        Count(key);
      }
      it->Next();
    }
    return it->status();
  }

  Status EnterPartition(const Tablet& tablet, std::string_view key) {
    TESSERA_ASSIGN_OR_RETURN(size_t n, PartitionPositionSize(t_, key));
    current_position_.assign(key.substr(0, n));
    current_ = PartitionResult{};
    TESSERA_RETURN_IF_ERROR(DecodePartitionKey(t_, key, &current_));
    const std::shared_ptr<Replica> replica = ctx_.replica_of(tablet);
    TESSERA_RETURN_IF_ERROR(LoadHeader(replica.get(), ctx_.consistency, current_position_, &header_, tablet.counters.get()));
    tablet.counters->sample.Add(ctx_.now_micros, current_position_, 1, /*write=*/false);
    resumed_ = !resumed_position_.empty() && current_position_ == resumed_position_;
    if (!resumed_) rows_in_partition_ = 0;
    // The resumed partition's too, so that its rows come with their static values.
    TESSERA_ASSIGN_OR_RETURN(current_.static_row, ReadStatic(t_, replica.get(), ctx_.consistency, current_position_, header_,
                                                             now_, tablet.counters.get()));
    static_key_ = current_position_ + static_cast<char>(KeyKind::kStaticRow);
    return Status::OK();
  }

  void Count(std::string_view key) {
    ++out_->rows;
    if (out_->rows >= req_.limit) {
      done_ = true;
      out_->next_cursor = EncodePagingCursor(rows_in_partition_, key);
    }
  }

  void FinishPartition() {
    if (current_position_.empty()) return;
    // A resumed partition that has no rows left was returned before.
    bool static_only = current_.rows.empty() && current_.static_row && !done_ && !resumed_;
    if (!current_.rows.empty() || static_only) {
      if (static_only) {
        ++rows_in_partition_;
        Count(static_key_);
      }
      out_->partitions.push_back(std::move(current_));
    }
    current_ = PartitionResult{};
    current_position_.clear();
  }

  const ReadContext& ctx_;
  const TableSchema& t_;
  const RangeRequest& req_;
  RangeResult* out_;
  const uint32_t now_;
  std::string resume_key_, resumed_position_;
  std::string current_position_, static_key_;
  PartitionResult current_;
  PartitionHeader header_;
  uint64_t rows_in_partition_ = 0;
  bool resumed_ = false;  // the current partition is the one the cursor is inside
  bool done_ = false;
};

}  // namespace

Result<RangeResult> ScanRange(const ReadContext& ctx, const RangeRequest& req) {
  if (ctx.table->buckets.enabled()) return ScanBuckets(ctx, req);
  if (ctx.table->partition_buckets.enabled()) return ScanSubPartitioned(ctx, req);
  return ScanStorageRange(ctx, req);
}

Result<RangeResult> ScanStorageRange(const ReadContext& ctx, const RangeRequest& req) {
  RangeResult out;
  if (req.limit == 0 || req.range.begin >= req.range.end) return out;
  RangeScanner scanner(ctx, req, &out);
  TESSERA_RETURN_IF_ERROR(scanner.Run());
  return out;
}

}  // namespace tessera
