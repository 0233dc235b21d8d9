#include "db/mutation_builder.h"

#include "db/partition_rows.h"  // Views
#include "keys/storage_key.h"
#include "storage/partition_header.h"
#include "types/serialization.h"

namespace tessera {
namespace {

Status ValidateCell(const TableSchema& t, const RowWrite& row, const CellWrite& c) {
  const ColumnDef* col = t.FindColumnById(c.column_id);
  if (!col) return Status::InvalidArgument("unknown column id " + std::to_string(c.column_id));
  if (col->kind == ColumnKind::kPartitionKey || col->kind == ColumnKind::kClustering) {
    return Status::InvalidArgument("primary key column " + col->name + " cannot be written as a cell");
  }
  if ((col->kind == ColumnKind::kStatic) != row.is_static) {
    return Status::InvalidArgument("column " + col->name + (row.is_static ? " is not static" : " is static"));
  }
  if (c.delete_collection) {
    if (!col->type.IsMultiCell()) return Status::InvalidArgument("column " + col->name + " is not a non-frozen collection or user type");
    return Status::OK();
  }
  const bool counter_column = col->type.kind() == TypeKind::kCounter;
  if (c.counter != counter_column && c.value) {
    return Status::InvalidArgument("column " + col->name +
                                   (counter_column ? " is a counter: it can only be incremented or decremented"
                                                   : " is not a counter: it cannot be incremented"));
  }
  if (c.counter && (c.has_path || c.value->size() != 8)) {
    return Status::InvalidArgument("column " + col->name + ": a counter increment is one bigint");
  }
  auto check = [&](const CqlType& type, const std::string& bytes) -> Status {
    Status s = ValidateSerialized(type, bytes);
    return s.ok() ? s : Status::InvalidArgument("column " + col->name + ": " + s.message());
  };
  if (!col->type.IsMultiCell()) {
    if (c.has_path) return Status::InvalidArgument("column " + col->name + " has no elements");
    return c.value ? check(col->type, *c.value) : Status::OK();
  }
  if (!c.has_path) return Status::InvalidArgument("column " + col->name + ": collection cells need an element path");
  const auto& p = col->type.params();
  switch (col->type.kind()) {
    case TypeKind::kList:
      if (c.path.size() != 16) return Status::InvalidArgument("column " + col->name + ": list element ids are 16 bytes");
      return c.value ? check(p[0], *c.value) : Status::OK();
    case TypeKind::kSet:
      return check(p[0], c.path);
    case TypeKind::kUdt: {
      std::optional<size_t> field = UserTypeFieldOfPath(c.path);
      if (!field || *field >= p.size()) return Status::InvalidArgument("column " + col->name + ": no such field");
      return c.value ? check(p[*field], *c.value) : Status::OK();
    }
    default:  // map
      TESSERA_RETURN_IF_ERROR(check(p[0], c.path));
      return c.value ? check(p[1], *c.value) : Status::OK();
  }
}

RowFragment BuildFragment(const RowWrite& row, int64_t ts, int32_t ttl, uint32_t now) {
  RowFragment f;
  if (row.insert) f.liveness = LivenessInfo{ts, ttl, ttl > 0 ? now + static_cast<uint32_t>(ttl) : 0};
  if (row.delete_row) f.deletion = DeletionTime{ts, now};
  for (const auto& c : row.cells) {
    Cell cell;
    cell.column_id = c.column_id;
    if (c.delete_collection) {
      // Just below the write timestamp, so that elements written by the same
      // statement survive (Cassandra uses timestamp - 1 likewise).
      cell.flags = Cell::kComplexDeletion;
      cell.timestamp = ts - 1;
      cell.local_deletion_time = now;
      f.cells.push_back(std::move(cell));
      continue;
    }
    cell.timestamp = ts;
    if (c.counter && c.value) {  // an increment: no TTL (the executor refuses one on counter tables)
      cell.flags = Cell::kCounter;
      cell.value = *c.value;
      f.cells.push_back(std::move(cell));
      continue;
    }
    if (c.has_path) {
      cell.flags |= Cell::kHasPath;
      cell.path = c.path;
    }
    if (!c.value) {
      cell.flags |= Cell::kTombstone;
      cell.local_deletion_time = now;
    } else {
      cell.value = *c.value;
      if (ttl > 0) {
        cell.flags |= Cell::kExpiring;
        cell.ttl = ttl;
        cell.local_deletion_time = now + static_cast<uint32_t>(ttl);
      }
    }
    f.cells.push_back(std::move(cell));
  }
  NormalizeRow(&f);
  return f;
}

// Appends merges to the write set and accounts them to the part of their position.
class PartWriter {
 public:
  PartWriter(WriteSet* out, BuiltMutation* built) : out_(out), built_(built) {}

  void Merge(const std::string& position, std::string key, std::string value, size_t rows) {
    BuiltMutation::Part* part = nullptr;
    for (auto& p : built_->parts) {
      if (p.position == position) part = &p;
    }
    if (!part) part = &built_->parts.emplace_back(BuiltMutation::Part{position, 0, 0});
    part->row_writes += rows;
    part->bytes += key.size() + value.size();
    out_->Merge(std::move(key), std::move(value));
  }

 private:
  WriteSet* out_;
  BuiltMutation* built_;
};

// The partition position a key of the given kind and clustering goes to.
std::string PositionFor(const TableSchema& t, const std::string& pos, const std::string& encoded_ck, uint32_t count) {
  if (!t.partition_buckets.enabled()) return pos;
  return SubPartitionPosition(pos, encoded_ck.empty() ? 0 : SubPartitionOf(encoded_ck, count));
}

}  // namespace

Result<BuiltMutation> BuildWriteSet(const Mutation& m, int64_t now_micros, WriteSet* out) {
  if (!m.table) return Status::InvalidArgument("mutation without a table");
  const TableSchema& t = *m.table;
  if (m.ttl_seconds < -1) return Status::InvalidArgument("TTL must not be negative");
  const int64_t ts = m.timestamp_micros == kNoTimestamp ? now_micros : m.timestamp_micros;
  const int32_t ttl = m.ttl_seconds == -1 ? t.options.default_time_to_live : m.ttl_seconds;
  const auto now = static_cast<uint32_t>(now_micros / 1'000'000);

  BuiltMutation built;
  Token token;
  TESSERA_RETURN_IF_ERROR(EncodePartitionPosition(t, Views(m.partition_key), &built.partition_position, &token));
  const std::string& pos = built.partition_position;
  PartWriter writer(out, &built);
  static const std::vector<uint32_t> kNoCounts{1};
  const std::vector<uint32_t>& counts = t.partition_buckets.enabled()
                                            ? t.partition_buckets.CountsFor(EncodedPartitionKeyOf(t, pos))
                                            : kNoCounts;

  if (m.delete_partition || !m.range_deletions.empty()) {
    PartitionHeader h;
    if (m.delete_partition) h.partition_deletion = DeletionTime{ts, now};
    for (const auto& rd : m.range_deletions) {
      std::string start, end;
      TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, Views(rd.start.prefix), &start));
      TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, Views(rd.end.prefix), &end));
      h.range_tombstones.push_back(
          MakeRangeTombstone(start, rd.start.inclusive, end, rd.end.inclusive, DeletionTime{ts, now}));
      ++built.row_writes;
    }
    built.row_writes += m.delete_partition ? 1 : 0;
    std::string value;
    EncodePartitionHeader(h, &value);
    const std::string header_position = PositionFor(t, pos, {}, 1);
    writer.Merge(header_position, header_position + static_cast<char>(KeyKind::kPartitionHeader), std::move(value),
                 built.row_writes);
  }

  const size_t clustering_size = t.Clustering().size();
  for (const auto& row : m.rows) {
    if (row.is_static && !row.clustering.empty()) return Status::InvalidArgument("the static row has no clustering key");
    if (!row.is_static && row.clustering.size() != clustering_size) {
      return Status::InvalidArgument("a row of " + t.name + " needs all " + std::to_string(clustering_size) +
                                     " clustering components, got " + std::to_string(row.clustering.size()));
    }
    for (const auto& c : row.cells) TESSERA_RETURN_IF_ERROR(ValidateCell(t, row, c));
    std::string ck;
    TESSERA_RETURN_IF_ERROR(EncodeClusteringPrefix(t, Views(row.clustering), &ck));
    const char kind = static_cast<char>(row.is_static ? KeyKind::kStaticRow : KeyKind::kRow);
    const RowFragment fragment = BuildFragment(row, ts, ttl, now);
    const std::string position = PositionFor(t, pos, ck, counts.back());
    std::string value;
    EncodeRowFragment(fragment, &value);
    writer.Merge(position, position + kind + ck, std::move(value), 1);
    ++built.row_writes;
    if (!row.delete_row || row.is_static) continue;
    // The row may have been written under an earlier count: delete it there too.
    RowFragment deletion;
    deletion.deletion = fragment.deletion;
    std::string encoded_deletion;
    EncodeRowFragment(deletion, &encoded_deletion);
    for (uint32_t count : counts) {
      const std::string earlier = PositionFor(t, pos, ck, count);
      if (earlier != position) writer.Merge(earlier, earlier + kind + ck, encoded_deletion, 0);
    }
  }
  if (built.parts.empty()) built.parts.push_back({PositionFor(t, pos, {}, 1), 0, 0});  // still a write of the partition
  return built;
}

}  // namespace tessera
