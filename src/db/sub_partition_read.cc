#include "db/sub_partition_read.h"

#include <algorithm>
#include <memory>

#include "common/bytes.h"
#include "db/partition_rows.h"
#include "keys/storage_key.h"

namespace tessera {
namespace {

// One sub-partition's part of a slice.
struct Stream {
  std::string position;  // the sub-partition's position
  const Tablet* tablet = nullptr;
  std::unique_ptr<KvIterator> it;
  uint64_t rows = 0;     // rows it contributed, for the tablet's key sample
  std::string_view ck() const { return it->key().substr(position.size() + 1); }
};

// What a merged read of one partition does besides the slice itself.
struct MergedRead {
  std::string logical;         // the partition's logical position
  bool read_static = true;     // read the static row (the first page of the partition)
  bool count_partition = true; // a point or slice read (hot-partition tracking), not a scan
  uint64_t rows_before = 0;    // rows of the partition returned by earlier pages
};

// One stream per sub-partition that holds keys of the slice (past the cursor), each bounded to
// them. Which ones do is probed first with one iterator per tablet: most sub-partitions of a
// small partition are empty, and a seek costs less than an iterator.
Result<std::vector<Stream>> OpenStreams(const ReadContext& ctx, const TabletMap& map, const std::string& logical,
                                        const SliceRequest& req, const std::string& lo, const std::string& hi,
                                        const std::string& resume) {
  const size_t n = logical.size();
  std::vector<Stream> streams;
  const Tablet* probed_tablet = nullptr;
  std::unique_ptr<KvIterator> probe;
  uint32_t empty_below = 0;  // on the probed tablet, the sub-partitions below this one hold nothing more
  for (uint32_t s : SubPartitionsOf(*ctx.table, logical, req, lo)) {
    Stream st;
    st.position = SubPartitionPosition(logical, s);
    st.tablet = &map.Find(st.position);
    if (st.tablet == probed_tablet && s < empty_below) continue;
    std::string from, to;
    if (!SubPartitionSliceBounds(logical, st.position, lo, hi, resume, req.reversed, &from, &to)) continue;
    if (st.tablet != probed_tablet) {
      probed_tablet = st.tablet;
      empty_below = 0;
      probe = ctx.replica_of(*st.tablet)->NewIterator(std::max(st.tablet->start, SubPartitionPosition(logical, 0)),
                                              st.tablet->end, ctx.consistency);
    }
    probe->Seek(from);
    if (!probe->Valid() || probe->key() >= std::string_view(to)) {
      TESSERA_RETURN_IF_ERROR(probe->status());
      // Nothing from here to the key found: the sub-partitions before the one it is in are empty.
      const std::string_view found = probe->Valid() ? probe->key() : std::string_view();
      empty_below = found.starts_with(logical) && found.size() >= n + kSubPartitionBytes ? SubPartitionAt(found, n)
                                                                                      : UINT32_MAX;
      continue;
    }
    st.it = ctx.replica_of(*st.tablet)->NewIterator(from, to, ctx.consistency);
    req.reversed ? st.it->SeekToLast() : st.it->Seek(from);
    streams.push_back(std::move(st));
  }
  return streams;
}

// The rows of `req`'s slice of one partition, merged over its sub-partitions, into *out.
Status ReadMerged(const ReadContext& ctx, const MergedRead& m, const SliceRequest& req, SliceResult* out) {
  const TableSchema& t = *ctx.table;
  const uint32_t now = Seconds(ctx.now_micros);
  std::string lo, hi, resume;
  TESSERA_RETURN_IF_ERROR(SliceBounds(t, m.logical, req, &lo, &hi));
  if (!req.cursor.empty()) {
    uint64_t ignored = 0;
    TESSERA_RETURN_IF_ERROR(DecodePagingCursor(req.cursor, &ignored, &resume));
    // The cursor comes back from the client: it must lie within the slice it was made for.
    if (resume < lo || resume > hi) return Status::InvalidArgument("invalid paging cursor");
  }
  auto map = ctx.tablets();
  const std::string home_position = SubPartitionPosition(m.logical, 0);
  const Tablet& home = map->Find(home_position);
  const std::shared_ptr<Replica> home_replica = ctx.replica_of(home);
  PartitionHeader header;
  TESSERA_RETURN_IF_ERROR(LoadHeader(home_replica.get(), ctx.consistency, home_position, &header, home.counters.get()));
  if (m.read_static) {
    TESSERA_ASSIGN_OR_RETURN(out->partition.static_row,
                             ReadStatic(t, home_replica.get(), ctx.consistency, home_position, header, now, home.counters.get()));
  }
  if (lo >= hi || req.limit == 0) return Status::OK();
  if (m.count_partition && ctx.count_partition_read) ctx.count_partition_read(m.logical);

  TESSERA_ASSIGN_OR_RETURN(std::vector<Stream> streams, OpenStreams(ctx, *map, m.logical, req, lo, hi, resume));
  for (;;) {
    Stream* next = nullptr;  // the stream whose head comes first in the slice's order
    for (auto& st : streams) {
      if (!st.it->Valid()) continue;
      if (!next || (req.reversed ? st.ck() > next->ck() : st.ck() < next->ck())) next = &st;
    }
    if (!next) break;
    const std::string ck(next->ck());
    RowFragment row;
    bool found = false;
    for (auto& st : streams) {  // the same row in several sub-partitions: reconcile
      if (!st.it->Valid() || st.ck() != ck) continue;
      st.tablet->counters->CountReadBytes(ctx.now_micros, st.it->key().size() + st.it->value().size());
      TESSERA_RETURN_IF_ERROR(FoldRowFragment(st.it->value(), &row, &found));
      req.reversed ? st.it->Prev() : st.it->Next();
    }
    TESSERA_ASSIGN_OR_RETURN(auto live,
                             MaterializeFragment(t, ck, false, std::move(row), header, now, &out->tombstones_scanned));
    if (!live) continue;
    out->partition.rows.push_back(std::move(*live));
    next->tablet->counters->CountRead(ctx.now_micros, 1, 0);
    ++next->rows;
    if (out->partition.rows.size() == req.limit) {
      out->next_cursor = EncodePagingCursor(m.rows_before + out->partition.rows.size(),
                                            m.logical + static_cast<char>(KeyKind::kRow) + ck);
      break;
    }
  }
  bool sampled = false;
  for (const auto& st : streams) {
    TESSERA_RETURN_IF_ERROR(st.it->status());
    if (st.rows == 0) continue;
    st.tablet->counters->sample.Add(ctx.now_micros, st.position, st.rows, /*write=*/false);
    sampled = true;
  }
  if (!sampled) home.counters->sample.Add(ctx.now_micros, home_position, 1, /*write=*/false);
  return Status::OK();
}

// The logical position of the first partition stored in [from, end), tablet by tablet.
Result<std::optional<std::string>> NextPartition(const ReadContext& ctx, std::string from, const std::string& end) {
  while (from < end) {
    auto map = ctx.tablets();
    const Tablet& tablet = map->Find(from);
    const std::string segment_end = std::min(tablet.end, end);
    auto it = ctx.replica_of(tablet)->NewIterator(from, segment_end, ctx.consistency);
    it->Seek(from);
    if (it->Valid()) {
      TESSERA_ASSIGN_OR_RETURN(size_t n, LogicalPartitionPositionSize(*ctx.table, it->key()));
      return std::optional<std::string>(std::string(it->key().substr(0, n)));
    }
    TESSERA_RETURN_IF_ERROR(it->status());
    from = segment_end;
  }
  return std::optional<std::string>();
}

}  // namespace

std::vector<uint32_t> SubPartitionsOf(const TableSchema& t, const std::string& logical, const SliceRequest& req,
                                      const std::string& lo) {
  const auto& counts = t.partition_buckets.CountsFor(EncodedPartitionKeyOf(t, logical));
  std::vector<uint32_t> subs;
  const bool point = req.lower.inclusive && req.upper.inclusive && req.lower.prefix == req.upper.prefix &&
                     req.lower.prefix.size() == t.Clustering().size();
  if (point) {
    const std::string_view ck = std::string_view(lo).substr(logical.size() + 1);
    for (uint32_t c : counts) subs.push_back(SubPartitionOf(ck, c));
    std::sort(subs.begin(), subs.end());
    subs.erase(std::unique(subs.begin(), subs.end()), subs.end());
    return subs;
  }
  const uint32_t span = *std::max_element(counts.begin(), counts.end());
  for (uint32_t s = 0; s < span; ++s) subs.push_back(s);
  return subs;
}

Status FoldRowFragment(std::string_view value, RowFragment* row, bool* found) {
  if (!*found) {
    TESSERA_RETURN_IF_ERROR(DecodeRowFragment(value, row));
    *found = true;
    return Status::OK();
  }
  RowFragment f;
  TESSERA_RETURN_IF_ERROR(DecodeRowFragment(value, &f));
  ReconcileRow(row, f);
  return Status::OK();
}

Status DecodeSubPartitionedScanCursor(const TableSchema& t, const RangeRequest& req, uint64_t* rows_in_partition,
                                      std::string* resume_key, std::string* resume_position) {
  TESSERA_RETURN_IF_ERROR(DecodePagingCursor(req.cursor, rows_in_partition, resume_key));
  // A logical key of this table within the range it was made for, naming a static or clustering row.
  auto n = LogicalPartitionPositionSize(t, *resume_key);
  if (!n.ok() || *resume_key < req.range.begin || *resume_key >= req.range.end || resume_key->size() <= *n ||
      static_cast<uint8_t>((*resume_key)[*n]) < static_cast<uint8_t>(KeyKind::kStaticRow) ||
      static_cast<uint8_t>((*resume_key)[*n]) > static_cast<uint8_t>(KeyKind::kRow)) {
    return Status::InvalidArgument("invalid paging cursor");
  }
  *resume_position = resume_key->substr(0, *n);
  return Status::OK();
}

bool SubPartitionSliceBounds(const std::string& logical, const std::string& position, const std::string& lo,
                             const std::string& hi, const std::string& resume, bool reversed, std::string* from,
                             std::string* to) {
  // Physical keys are the logical ones with the sub-partition inserted after the logical position.
  const size_t n = logical.size();
  *from = position + lo.substr(n);
  *to = position + hi.substr(n);
  if (!resume.empty()) {  // strictly after (before, when reversed) the cursor's row
    (reversed ? *to : *from) = position + resume.substr(n) + (reversed ? "" : std::string(1, '\0'));
  }
  return *from < *to;
}

Result<std::optional<RowResult>> ReadSubPartitionedRow(const ReadContext& ctx, const std::vector<std::string>& pk,
                                                       const std::vector<std::string>& clustering) {
  const TableSchema& t = *ctx.table;
  if (clustering.size() != t.Clustering().size()) {
    return Status::InvalidArgument("a row of " + t.name + " needs all " + std::to_string(t.Clustering().size()) +
                                   " clustering components");
  }
  std::string logical, ck;
  Token token;
  TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, Views(pk), &logical, &token));
  TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, Views(clustering), &ck));
  if (ctx.count_partition_read) ctx.count_partition_read(logical);
  auto map = ctx.tablets();
  const std::string home_position = SubPartitionPosition(logical, 0);
  const Tablet& home = map->Find(home_position);
  PartitionHeader header;
  TESSERA_RETURN_IF_ERROR(LoadHeader(ctx.replica_of(home).get(), ctx.consistency, home_position, &header, home.counters.get()));
  // The row is where its partition's current count puts it, or where an earlier count did.
  const auto& counts = t.partition_buckets.CountsFor(EncodedPartitionKeyOf(t, logical));
  RowFragment row;
  bool found = false;
  std::vector<uint32_t> looked;
  const Tablet* current = nullptr;
  std::string current_position;
  for (auto c = counts.rbegin(); c != counts.rend(); ++c) {
    const uint32_t sub = SubPartitionOf(ck, *c);
    if (std::find(looked.begin(), looked.end(), sub) != looked.end()) continue;
    looked.push_back(sub);
    const std::string position = SubPartitionPosition(logical, sub);
    const Tablet& tablet = map->Find(position);
    if (!current) {
      current = &tablet;
      current_position = position;
    }
    std::string value;
    const std::string key = position + static_cast<char>(KeyKind::kRow) + ck;
    Status s = ctx.replica_of(tablet)->Get(key, &value, ctx.consistency);
    if (s.IsNotFound()) continue;
    TESSERA_RETURN_IF_ERROR(s);
    tablet.counters->CountReadBytes(ctx.now_micros, key.size() + value.size());
    TESSERA_RETURN_IF_ERROR(FoldRowFragment(value, &row, &found));
  }
  current->counters->sample.Add(ctx.now_micros, current_position, 1, /*write=*/false);
  if (!found) return std::optional<RowResult>();
  TESSERA_ASSIGN_OR_RETURN(auto live, MaterializeFragment(t, ck, false, std::move(row), header, Seconds(ctx.now_micros)));
  if (live) current->counters->CountRead(ctx.now_micros, 1, 0);
  return live;
}

Result<SliceResult> ReadSubPartitionedSlice(const ReadContext& ctx, const std::vector<std::string>& pk,
                                            const SliceRequest& req) {
  SliceResult out;
  MergedRead m;
  TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(*ctx.table, Views(pk), &m.logical, &out.partition.token));
  out.partition.partition_key = pk;
  m.read_static = req.cursor.empty();
  TESSERA_RETURN_IF_ERROR(ReadMerged(ctx, m, req, &out));
  return out;
}

Result<RangeResult> ScanSubPartitioned(const ReadContext& ctx, const RangeRequest& req) {
  const TableSchema& t = *ctx.table;
  RangeResult out;
  if (req.limit == 0 || req.range.begin >= req.range.end) return out;
  std::string from = req.range.begin, resume_key, resume_position;
  uint64_t rows_in_partition = 0;
  if (!req.cursor.empty()) {
    TESSERA_RETURN_IF_ERROR(DecodeSubPartitionedScanCursor(t, req, &rows_in_partition, &resume_key, &resume_position));
    from = resume_position;
  }
  while (out.rows < req.limit) {
    TESSERA_ASSIGN_OR_RETURN(auto logical, NextPartition(ctx, from, req.range.end));
    if (!logical) break;
    if (!PrefixSuccessor(*logical, &from)) from = req.range.end;
    const bool resumed = *logical == resume_position;
    MergedRead m{*logical, !resumed, false, resumed ? rows_in_partition : 0};
    if (resumed && static_cast<KeyKind>(resume_key[logical->size()]) == KeyKind::kStaticRow) continue;  // static only
    if (m.rows_before >= req.per_partition_limit) continue;
    SliceRequest slice;
    slice.limit = std::min<uint64_t>(req.limit - out.rows, req.per_partition_limit - m.rows_before);
    if (resumed) slice.cursor = EncodePagingCursor(rows_in_partition, resume_key);
    SliceResult r;
    TESSERA_ASSIGN_OR_RETURN(r.partition.partition_key, DecodePartitionPosition(t, *logical));
    if (t.distribution == Distribution::kHash) r.partition.token = DecodeToken(std::string_view(*logical).substr(4, 8));
    TESSERA_RETURN_IF_ERROR(ReadMerged(ctx, m, slice, &r));
    out.tombstones_scanned += r.tombstones_scanned;
    const bool static_only = r.partition.rows.empty() && r.partition.static_row;
    if (r.partition.rows.empty() && !static_only) continue;
    out.rows += static_only ? 1 : r.partition.rows.size();
    out.partitions.push_back(std::move(r.partition));
    if (out.rows >= req.limit) {
      out.next_cursor = static_only ? EncodePagingCursor(1, *logical + static_cast<char>(KeyKind::kStaticRow))
                                    : r.next_cursor;
    }
  }
  return out;
}

}  // namespace tessera
