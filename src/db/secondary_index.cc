#include "db/secondary_index.h"

#include <xxhash.h>

#include <algorithm>

namespace tessera {
namespace {

Status Refuse(const std::string& message) { return Status::InvalidArgument(message); }

const char* TargetWord(IndexDef::Target t) {
  switch (t) {
    case IndexDef::Target::kKeys: return "keys";
    case IndexDef::Target::kEntries: return "entries";
    case IndexDef::Target::kFull: return "full";
    case IndexDef::Target::kValues: return "values";
  }
  return "values";
}

bool ContainsDuration(const CqlType& t) {
  if (t.kind() == TypeKind::kDuration) return true;
  for (const auto& p : t.params()) {
    if (ContainsDuration(p)) return true;
  }
  return false;
}

// Cassandra 4.1's checks (CreateIndexStatement.validateIndexTarget), in its order and words.
Status CheckTarget(const TableSchema& base, const ColumnDef& c, IndexDef::Target target) {
  if (base.HasCounters()) return Refuse("Secondary indexes on counter tables are not supported");
  if (c.kind == ColumnKind::kPartitionKey && base.PartitionKey().size() == 1) {
    return Refuse("Cannot create secondary index on the only partition key column " + c.name);
  }
  if (c.type.kind() == TypeKind::kDuration) return Refuse("Secondary indexes are not supported on duration columns");
  if (ContainsDuration(c.type)) {
    if (c.type.IsCollection()) return Refuse("Secondary indexes are not supported on collections containing durations");
    if (c.type.kind() == TypeKind::kTuple) return Refuse("Secondary indexes are not supported on tuples containing durations");
    return Refuse("Secondary indexes are not supported on UDTs containing durations");
  }
  if (c.type.kind() == TypeKind::kUdt && c.type.IsMultiCell()) {
    return Refuse("Cannot create index on non-frozen UDT column " + c.name);
  }
  const bool collection = c.type.IsCollection();
  if (target != IndexDef::Target::kFull && target != IndexDef::Target::kValues && !collection) {
    return Refuse(std::string("Cannot create ") + TargetWord(target) + "() index on " + c.name +
                  ". Non-collection columns only support simple indexes");
  }
  if (collection && c.type.frozen() && target != IndexDef::Target::kFull) {
    return Refuse(std::string("Cannot create ") + TargetWord(target) + "() index on frozen column " + c.name +
                  ". Frozen collections are immutable and must be fully indexed by using the 'full(" + c.name +
                  ")' modifier");
  }
  if (target == IndexDef::Target::kFull && !(collection && c.type.frozen())) {
    return Refuse("full() indexes can only be created on frozen collections");
  }
  if ((target == IndexDef::Target::kKeys || target == IndexDef::Target::kEntries) && c.type.kind() != TypeKind::kMap) {
    return Refuse(std::string("Cannot create index on ") + TargetWord(target) + " of column " + c.name +
                  " with non-map type");
  }
  return Status::OK();
}

// When a row stops being live by itself: the latest expiry of its marker and
// cells, or 0 when one of them never expires.
uint32_t RowExpiry(const RowResult& row) {
  uint32_t latest = 0;
  if (!row.marker.IsEmpty()) {
    if (row.marker.ttl == 0) return 0;
    latest = row.marker.expiry;
  }
  for (const Cell& c : row.cells) {
    if (!c.IsExpiring()) return 0;
    latest = std::max(latest, c.local_deletion_time);
  }
  return latest;
}

IndexEntry MakeEntry(std::vector<std::string> value, const std::vector<std::string>& pk, const RowResult* row,
                     uint32_t expiry) {
  IndexEntry e;
  e.value = std::move(value);
  e.base_key = pk;
  if (row) e.base_key.insert(e.base_key.end(), row->clustering.begin(), row->clustering.end());
  e.expiry = expiry;
  return e;
}

}  // namespace

std::string DerivedUuid(const std::string& base_uuid, const std::string& name) {
  const std::string seed = base_uuid + '\0' + name;
  const XXH128_hash_t h = XXH3_128bits(seed.data(), seed.size());
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] = static_cast<char>(h.high64 >> (56 - 8 * i));
    out[static_cast<size_t>(8 + i)] = static_cast<char>(h.low64 >> (56 - 8 * i));
  }
  out[6] = static_cast<char>((out[6] & 0x0F) | 0x40);  // version 4 form, variant 1
  out[8] = static_cast<char>((out[8] & 0x3F) | 0x80);
  return out;
}

CqlType IndexedValueType(const ColumnDef& c, IndexDef::Target target) {
  if (!c.type.IsCollection() || target == IndexDef::Target::kFull) return c.type;
  if (c.type.kind() == TypeKind::kMap) {
    return target == IndexDef::Target::kValues ? c.type.params()[1] : c.type.params()[0];
  }
  return c.type.params()[0];
}

bool IsStaticIndex(const TableSchema& base, const IndexDef& index) {
  const ColumnDef* c = base.FindColumnById(index.column_id);
  return c && c->kind == ColumnKind::kStatic;
}

Result<TableSchema> BackingTableSchema(const TableSchema& base, const IndexDef& index) {
  const ColumnDef* c = base.FindColumnById(index.column_id);
  if (!c) return Status::InvalidArgument("the indexed column no longer exists");
  TESSERA_RETURN_IF_ERROR(CheckTarget(base, *c, index.target));
  TableSchema t;
  t.keyspace = base.keyspace;
  t.name = index.backing_table;
  t.index_of = index.name;
  t.uuid = DerivedUuid(base.uuid, index.name);
  t.distribution = Distribution::kHash;
  t.options.gc_grace_seconds = base.options.gc_grace_seconds;
  t.options.comment = "secondary index " + index.name + " of " + base.name;
  for (const ColumnDef* k : base.PartitionKey()) {
    if (k->name == kIndexValueColumn || k->name == kIndexKeyColumn) {
      return Refuse("Cannot index table " + base.name + ": its key column " + k->name + " is a name indexes use");
    }
  }
  for (const ColumnDef* k : base.Clustering()) {
    if (k->name == kIndexValueColumn || k->name == kIndexKeyColumn) {
      return Refuse("Cannot index table " + base.name + ": its key column " + k->name + " is a name indexes use");
    }
  }
  auto add = [&](std::string name, CqlType type, ColumnKind kind, SortOrder order) {
    ColumnDef d;
    d.name = std::move(name);
    d.type = type.WithFrozen(true);
    d.kind = kind;
    d.order = order;
    t.columns.push_back(std::move(d));
  };
  if (index.target == IndexDef::Target::kEntries) {
    add(kIndexKeyColumn, c->type.params()[0], ColumnKind::kPartitionKey, SortOrder::kAsc);
    add(kIndexValueColumn, c->type.params()[1], ColumnKind::kPartitionKey, SortOrder::kAsc);
  } else {
    add(kIndexValueColumn, IndexedValueType(*c, index.target), ColumnKind::kPartitionKey, SortOrder::kAsc);
  }
  for (const ColumnDef* k : base.PartitionKey()) add(k->name, k->type, ColumnKind::kClustering, SortOrder::kAsc);
  if (c->kind != ColumnKind::kStatic) {
    for (const ColumnDef* k : base.Clustering()) add(k->name, k->type, ColumnKind::kClustering, k->order);
  }
  for (const ColumnDef& col : t.columns) {
    if (col.kind == ColumnKind::kPartitionKey && !col.type.IsKeyable()) {
      return Refuse("Secondary indexes are not supported on values of type " + col.type.ToCql());
    }
  }
  return t;
}

void CollectIndexEntries(const TableSchema& base, const IndexDef& index, const std::vector<std::string>& pk,
                         const RowResult* row, const RowResult* static_row, std::vector<IndexEntry>* out) {
  const ColumnDef* c = base.FindColumnById(index.column_id);
  if (!c) return;
  if (c->kind == ColumnKind::kStatic) {
    row = static_row;
    if (!row) return;
  } else if (!row) {
    return;
  }
  if (c->kind == ColumnKind::kPartitionKey || c->kind == ColumnKind::kClustering) {
    const auto cols = c->kind == ColumnKind::kPartitionKey ? base.PartitionKey() : base.Clustering();
    const auto& values = c->kind == ColumnKind::kPartitionKey ? pk : row->clustering;
    for (size_t i = 0; i < cols.size() && i < values.size(); ++i) {
      if (cols[i] != c) continue;
      out->push_back(MakeEntry({values[i]}, pk, row, RowExpiry(*row)));
    }
    return;
  }
  const RowResult* key_row = c->kind == ColumnKind::kStatic ? nullptr : row;
  for (const Cell& cell : row->cells) {
    if (cell.column_id != c->id) continue;
    const uint32_t expiry = cell.IsExpiring() ? cell.local_deletion_time : 0;
    std::vector<std::string> value;
    if (!c->type.IsMultiCell()) {
      value = {cell.value};
    } else if (c->type.kind() == TypeKind::kSet) {
      value = {cell.path};
    } else if (c->type.kind() == TypeKind::kList) {
      value = {cell.value};
    } else if (c->type.kind() == TypeKind::kMap) {
      if (index.target == IndexDef::Target::kKeys) value = {cell.path};
      else if (index.target == IndexDef::Target::kEntries) value = {cell.path, cell.value};
      else value = {cell.value};
    } else {
      continue;  // non-frozen UDTs are not indexable
    }
    out->push_back(MakeEntry(std::move(value), pk, key_row, expiry));
  }
}

}  // namespace tessera
