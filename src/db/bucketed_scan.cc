#include "db/bucketed_scan.h"

#include <algorithm>

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

// The partitions of every stream, in logical order.
Result<std::vector<Positioned>> ReadStreams(const ReadContext& ctx, const RangeRequest& req, const Cursor& cursor,
                                            RangeResult* out) {
  const TableSchema& t = *ctx.table;
  const auto& versions = t.buckets.versions;
  std::vector<Positioned> all;
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
      TESSERA_ASSIGN_OR_RETURN(RangeResult r, ScanStorageRange(ctx, sub));
      out->tombstones_scanned += r.tombstones_scanned;
      for (auto& p : r.partitions) {
        std::string position;
        Token token;
        std::vector<std::string_view> pk(p.partition_key.begin(), p.partition_key.end());
        TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, pk, &position, &token));
        all.push_back({LogicalKey(t, position), std::move(p)});
      }
    }
  }
  std::sort(all.begin(), all.end(), [](const Positioned& a, const Positioned& b) { return a.logical < b.logical; });
  return all;
}

}  // namespace

Result<RangeResult> ScanBuckets(const ReadContext& ctx, const RangeRequest& req) {
  RangeResult out;
  if (req.limit == 0 || req.range.begin >= req.range.end) return out;
  const TableSchema& t = *ctx.table;
  Cursor cursor;
  TESSERA_RETURN_IF_ERROR(ParseCursor(t, req, &cursor));
  TESSERA_ASSIGN_OR_RETURN(auto partitions, ReadStreams(ctx, req, cursor, &out));
  for (auto& [logical, p] : partitions) {
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

}  // namespace tessera
