#include "cql/executor/group_by.h"

#include "common/bytes.h"

namespace tessera::cql {
namespace {

// Whether the WHERE clause restricts `column` by one `=` (it then holds one value in the result).
bool RestrictedByEq(const SelectStatement& s, const std::string& column) {
  for (const auto& r : s.where) {
    if (r.lhs == Relation::Lhs::kColumn && r.op == Relation::Op::kEq && r.columns.size() == 1 &&
        r.columns[0] == column) {
      return true;
    }
  }
  return false;
}

size_t IndexOf(const TableSchema& t, const ColumnDef* c) { return static_cast<size_t>(c - t.columns.data()); }

}  // namespace

Result<GroupBy> MakeGroupBy(const TableSchema& t, const SelectStatement& s) {
  const std::string kOrder =
      "Group by currently only support groups of columns following their declared order in the PRIMARY KEY";
  std::vector<const ColumnDef*> key = t.PartitionKey();
  for (const auto* c : t.Clustering()) key.push_back(c);
  GroupBy out;
  size_t next = 0;  // the next primary-key column the GROUP BY may name
  for (const auto& name : s.group_by) {
    const ColumnDef* def = t.FindColumn(name);
    if (!def) return Status::InvalidArgument("Undefined column name " + name);
    if (def->kind != ColumnKind::kPartitionKey && def->kind != ColumnKind::kClustering) {
      return Status::InvalidArgument("Group by is currently only supported on the columns of the PRIMARY KEY, got " +
                                     name);
    }
    for (;;) {  // skip the columns before it that `=` restricts
      if (next == key.size()) return Status::InvalidArgument(kOrder);
      const ColumnDef* pk = key[next++];
      if (pk->kind == ColumnKind::kClustering) ++out.clustering_prefix;
      if (pk == def) break;
      if (!RestrictedByEq(s, pk->name)) return Status::InvalidArgument(kOrder);
    }
  }
  if (next < key.size() && key[next]->kind == ColumnKind::kPartitionKey) {
    return Status::InvalidArgument("Group by is not supported on only a part of the partition key");
  }
  if (out.clustering_prefix > 0 && s.distinct) {
    return Status::InvalidArgument("Grouping on clustering columns is not allowed for SELECT DISTINCT queries");
  }
  return out;
}

namespace {

void PutValue(std::string* out, const std::optional<std::string>& v) {
  if (!v) {
    out->push_back('\0');  // null
    return;
  }
  out->push_back('\1');
  PutVarint64(out, v->size());
  out->append(*v);
}

constexpr uint8_t kGroupPagingKind = 5;

}  // namespace

std::string PartitionOf(const TableSchema& t, const SourceRow& row) {
  std::string out;
  for (const auto* c : t.PartitionKey()) PutValue(&out, row.values[IndexOf(t, c)]);
  return out;
}

std::string GroupKey(const TableSchema& t, const GroupBy& group, const SourceRow& row) {
  std::string out = PartitionOf(t, row);
  out.push_back(row.static_only ? '\1' : '\0');  // a static-only row is a group of its own
  const auto clustering = t.Clustering();
  for (size_t i = 0; i < group.clustering_prefix && i < clustering.size(); ++i) {
    PutValue(&out, row.values[IndexOf(t, clustering[i])]);
  }
  return out;
}

std::string EncodeGroupPaging(const GroupPaging& p) {
  std::string s(1, '\x01');
  s.push_back(static_cast<char>(kGroupPagingKind));
  PutVarint64(&s, p.groups_returned);
  PutVarint64(&s, p.groups_in_partition);
  PutVarint64(&s, p.last_group.size());
  s += p.last_group;
  PutVarint64(&s, p.last_partition.size());
  s += p.last_partition;
  return s + p.read;
}

Result<GroupPaging> DecodeGroupPaging(const std::string& s) {
  ByteReader r(s);
  uint8_t version = 0, kind = 0;
  GroupPaging p;
  if (!r.ReadByte(&version) || version != 1 || !r.ReadByte(&kind) || kind != kGroupPagingKind ||
      !r.ReadVarint64(&p.groups_returned) || !r.ReadVarint64(&p.groups_in_partition) ||
      !r.ReadLengthPrefixed(&p.last_group) || !r.ReadLengthPrefixed(&p.last_partition)) {
    return Status::InvalidArgument("Invalid paging state");
  }
  p.read.assign(r.rest());
  return p;
}

bool SamePartition(const TableSchema& t, const SourceRow& a, const SourceRow& b) {
  for (const auto* c : t.PartitionKey()) {
    if (a.values[IndexOf(t, c)] != b.values[IndexOf(t, c)]) return false;
  }
  return true;
}

std::vector<std::pair<size_t, size_t>> GroupRows(const TableSchema& t, const GroupBy& group,
                                                 const std::vector<SourceRow>& rows) {
  const auto clustering = t.Clustering();
  auto same_group = [&](const SourceRow& a, const SourceRow& b) {
    if (!SamePartition(t, a, b)) return false;
    if (a.static_only != b.static_only) return false;  // a static-only row has no clustering values
    for (size_t i = 0; i < group.clustering_prefix; ++i) {
      if (a.values[IndexOf(t, clustering[i])] != b.values[IndexOf(t, clustering[i])]) return false;
    }
    return true;
  };
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (out.empty() || !same_group(rows[out.back().first], rows[i])) {
      out.emplace_back(i, i + 1);
    } else {
      out.back().second = i + 1;
    }
  }
  return out;
}

}  // namespace tessera::cql
