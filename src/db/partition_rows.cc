#include "db/partition_rows.h"

#include "common/bytes.h"
#include "keys/key_encoding.h"
#include "keys/storage_key.h"

namespace tessera {

std::vector<std::string_view> Views(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

Status DecodePartitionKey(const TableSchema& t, std::string_view key, PartitionResult* p) {
  TESSERA_ASSIGN_OR_RETURN(DecodedKey d, DecodeStorageKey(t, key));
  p->partition_key = std::move(d.partition_key);
  p->token = d.token;
  return Status::OK();
}

Status LoadHeader(Replica* replica, const RequestConsistency& consistency, const std::string& position,
                  PartitionHeader* header, TabletCounters* counters) {
  std::string value;
  Status s = replica->Get(position + static_cast<char>(KeyKind::kPartitionHeader), &value, consistency);
  if (s.IsNotFound()) {
    *header = PartitionHeader{};
    return Status::OK();
  }
  TESSERA_RETURN_IF_ERROR(s);
  counters->bytes_read += value.size();
  return DecodePartitionHeader(value, header);
}

Result<std::optional<RowResult>> MaterializeFragment(const TableSchema& t, std::string_view ck, bool is_static,
                                                     RowFragment f, const PartitionHeader& header, uint32_t now,
                                                     uint64_t* tombstones) {
  if (tombstones) {
    for (const auto& c : f.cells) *tombstones += !c.IsLive(now);
  }
  bool had_data = !f.IsEmpty();
  ApplyDeletion(header.DeletionFor(ck, is_static), &f);
  if (!f.IsLive(now)) {
    if (tombstones && had_data) *tombstones += 1;
    return std::optional<RowResult>();
  }
  RowResult r;
  r.is_static = is_static;
  if (f.liveness.IsLive(now)) r.marker = f.liveness;
  for (auto& c : f.cells) {
    if (c.IsLive(now)) r.cells.push_back(std::move(c));
  }
  if (!is_static) {
    std::string_view in = ck;
    for (const auto* col : t.Clustering()) {
      std::string v;
      TESSERA_RETURN_IF_ERROR(DecodeKeyComponent(col->type, col->order, &in, &v));
      r.clustering.push_back(std::move(v));
    }
  }
  return std::optional<RowResult>(std::move(r));
}

Result<std::optional<RowResult>> Materialize(const TableSchema& t, std::string_view ck, bool is_static,
                                             std::string_view value, const PartitionHeader& header, uint32_t now,
                                             uint64_t* tombstones) {
  RowFragment f;
  TESSERA_RETURN_IF_ERROR(DecodeRowFragment(value, &f));
  return MaterializeFragment(t, ck, is_static, std::move(f), header, now, tombstones);
}

Result<std::optional<RowResult>> ReadStatic(const TableSchema& t, Replica* replica, const RequestConsistency& consistency,
                                            const std::string& position,
                                            const PartitionHeader& header, uint32_t now, TabletCounters* counters) {
  if (!t.HasStatic()) return std::optional<RowResult>();
  std::string value;
  Status s = replica->Get(position + static_cast<char>(KeyKind::kStaticRow), &value, consistency);
  if (s.IsNotFound()) return std::optional<RowResult>();
  TESSERA_RETURN_IF_ERROR(s);
  counters->bytes_read += value.size();
  return Materialize(t, {}, true, value, header, now);
}

Status SliceBounds(const TableSchema& t, const std::string& position, const SliceRequest& req, std::string* lo,
                   std::string* hi) {
  const std::string rows = position + static_cast<char>(KeyKind::kRow);
  *lo = rows;
  if (!req.lower.prefix.empty()) {
    std::string p = rows;
    TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, Views(req.lower.prefix), &p));
    if (req.lower.inclusive) *lo = p;
    else if (!PrefixSuccessor(p, lo)) *lo = p;
  }
  *hi = position + static_cast<char>(static_cast<char>(KeyKind::kRow) + 1);
  if (!req.upper.prefix.empty()) {
    std::string p = rows;
    TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, Views(req.upper.prefix), &p));
    if (!req.upper.inclusive) *hi = p;
    else PrefixSuccessor(p, hi);
  }
  return Status::OK();
}

}  // namespace tessera
