#include "db/bucketed_scan.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include "keys/storage_key.h"

namespace tessera {
namespace {

struct Cursor {
  bool present = false;
  uint64_t rows_in_partition = 0;
  std::string key;        // logical
  std::string partition;  // logical partition position of `key`
};

Status ParseCursor(const TableSchema& t, const RangeRequest& req, Cursor* c) {
  if (req.cursor.empty()) return Status::OK();
  TESSERA_RETURN_IF_ERROR(DecodePagingCursor(req.cursor, &c->rows_in_partition, &c->key));
  auto n = PartitionPositionSize(t, PhysicalKey(t.id, 0, c->key));
  if (!n.ok() || c->key < req.range.begin || c->key >= req.range.end || c->key.size() < 4) {
    return Status::InvalidArgument("invalid paging cursor");
  }
  c->present = true;
  c->partition = c->key.substr(0, *n - 2);
  return Status::OK();
}

struct Positioned {
  std::string logical;  // partition position
  PartitionResult partition;
};

// The scan of every bucket (of every version) that can hold rows of the
// range past the cursor, over the physical form of the intersection, with
// the request's limits pushed into each.
std::vector<RangeRequest> BucketRequests(const TableSchema& t, const RangeRequest& req, const Cursor& cursor) {
  const auto& versions = t.buckets.versions;
  std::vector<RangeRequest> subs;
  for (size_t v = 0; v < versions.size(); ++v) {
    const std::string vbegin = TablePrefix(t.id) + versions[v].start;
    const std::string vend = v + 1 < versions.size() ? TablePrefix(t.id) + versions[v + 1].start : TablePrefix(t.id + 1);
    const std::string lo = std::max(req.range.begin, vbegin), hi = std::min(req.range.end, vend);
    if (lo >= hi || (cursor.present && cursor.key >= hi)) continue;
    for (uint32_t b = 0; b < versions[v].count; ++b) {
      RangeRequest sub;
      sub.range = {PhysicalKey(t.id, b, lo), PhysicalKey(t.id, b, hi)};
      sub.limit = req.limit;
      sub.per_partition_limit = req.per_partition_limit;
      if (cursor.present && cursor.key >= lo) {
        sub.cursor = EncodePagingCursor(cursor.rows_in_partition, PhysicalKey(t.id, b, cursor.key));
      }
      subs.push_back(std::move(sub));
    }
  }
  return subs;
}

// The page: the buckets' partitions in logical order, up to the limit.
Result<RangeResult> MergeBuckets(const TableSchema& t, const RangeRequest& req, const Cursor& cursor,
                                 std::vector<RangeResult> buckets) {
  RangeResult out;
  std::vector<Positioned> all;
  for (auto& r : buckets) {
    out.tombstones_scanned += r.tombstones_scanned;
    for (auto& p : r.partitions) {
      std::string position;
      Token token;
      std::vector<std::string_view> pk(p.partition_key.begin(), p.partition_key.end());
      TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, pk, &position, &token));
      all.push_back({LogicalKey(t, position), std::move(p)});
    }
  }
  std::sort(all.begin(), all.end(), [](const Positioned& a, const Positioned& b) { return a.logical < b.logical; });
  for (auto& [logical, p] : all) {
    if (out.rows >= req.limit) break;
    const uint64_t before = cursor.present && logical == cursor.partition ? cursor.rows_in_partition : 0;
    std::string last_key;
    uint64_t taken = 0;
    if (p.rows.empty()) {  // a partition with only a static row counts as one row
      taken = 1;
      last_key = logical + static_cast<char>(KeyKind::kStaticRow);
    } else {
      taken = std::min<uint64_t>(p.rows.size(), req.limit - out.rows);
      p.rows.resize(taken);
      last_key = logical + static_cast<char>(KeyKind::kRow);
      const auto& ck = p.rows.back().clustering;
      TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, {ck.begin(), ck.end()}, &last_key));
    }
    out.rows += taken;
    out.partitions.push_back(std::move(p));
    if (out.rows >= req.limit) out.next_cursor = EncodePagingCursor(before + taken, last_key);
  }
  return out;
}

// What the buckets' asynchronous scans share until the last one answers.
struct BucketScans {
  std::mutex mu;
  size_t pending = 0;
  Status error;
  std::vector<RangeResult> results;
};

}  // namespace

Result<RangeResult> ScanBuckets(const ReadContext& ctx, const RangeRequest& req) {
  if (req.limit == 0 || req.range.begin >= req.range.end) return RangeResult{};
  const TableSchema& t = *ctx.table;
  Cursor cursor;
  TESSERA_RETURN_IF_ERROR(ParseCursor(t, req, &cursor));
  std::vector<RangeResult> buckets;
  for (const RangeRequest& sub : BucketRequests(t, req, cursor)) {
    TESSERA_ASSIGN_OR_RETURN(RangeResult r, ScanStorageRange(ctx, sub));
    buckets.push_back(std::move(r));
  }
  return MergeBuckets(t, req, cursor, std::move(buckets));
}

void ScanBucketsAsync(const ReadContext& ctx, const RangeRequest& req, RangeDone done) {
  if (req.limit == 0 || req.range.begin >= req.range.end) return done(RangeResult{});
  Cursor cursor;
  if (Status s = ParseCursor(*ctx.table, req, &cursor); !s.ok()) return done(s);
  std::vector<RangeRequest> subs = BucketRequests(*ctx.table, req, cursor);
  if (subs.empty()) return done(RangeResult{});
  auto scans = std::make_shared<BucketScans>();
  scans->pending = subs.size();
  scans->results.resize(subs.size());
  auto finish = [scans, table = ctx.table, req, cursor, done = std::move(done)] {
    if (!scans->error.ok()) return done(scans->error);
    done(MergeBuckets(*table, req, cursor, std::move(scans->results)));
  };
  for (size_t i = 0; i < subs.size(); ++i) {
    ScanStorageRangeAsync(ctx, subs[i], [scans, i, finish](Result<RangeResult> r) {
      {
        std::lock_guard<std::mutex> lock(scans->mu);
        if (r.ok()) {
          scans->results[i] = std::move(r).value();
        } else if (scans->error.ok()) {
          scans->error = r.status();
        }
        if (--scans->pending > 0) return;
      }
      finish();
    });
  }
}

}  // namespace tessera
