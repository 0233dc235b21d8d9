#include "cql/executor/modification_statements.h"

#include <algorithm>
#include <atomic>
#include <set>

#include "common/bytes.h"
#include "common/time_uuid.h"
#include "cql/executor/insert_json.h"
#include "cql/executor/where_clause.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

constexpr int64_t kMaxTtl = 630720000;  // 20 years, Cassandra's limit
constexpr int64_t kPrependReference = kGregorianOffset100ns + 12623040000000000LL;  // 2010-01-01 in ticks

// A list element id: big-endian 100-ns ticks, then 8 random bytes.
std::string ListElementId(uint64_t ticks, std::mt19937_64& rng) {
  std::string id;
  PutBigEndian64(&id, ticks);
  PutBigEndian64(&id, rng());
  return id;
}

// Ticks for `n` appended elements: strictly increasing across the process.
uint64_t AppendTicks(int64_t now_micros, size_t n) {
  static std::atomic<int64_t> last{0};
  int64_t want = now_micros * 10 + kGregorianOffset100ns, prev = last.load();
  while (true) {
    int64_t start = std::max(want, prev + 1);
    if (last.compare_exchange_weak(prev, start + static_cast<int64_t>(n))) return static_cast<uint64_t>(start);
  }
}

// Ticks for `n` prepended elements: below every appended id, and each
// prepend below the previous one (mirrored around 2010-01-01, as Cassandra does).
uint64_t PrependTicks(int64_t now_micros, size_t n) {
  static std::atomic<int64_t> last{INT64_MAX};
  int64_t now_ticks = now_micros * 10 + kGregorianOffset100ns;
  int64_t want = kPrependReference - (now_ticks - kPrependReference) - static_cast<int64_t>(n);
  int64_t prev = last.load();
  while (true) {
    int64_t start = std::min(want, prev - static_cast<int64_t>(n));
    if (last.compare_exchange_weak(prev, start)) return static_cast<uint64_t>(start);
  }
}

Status ApplyUsing(const Using& u, const WriteContext& ctx, Mutation* m) {
  m->timestamp_micros = ctx.default_timestamp.value_or(kNoTimestamp);
  if (m->table && m->table->HasCounters()) {
    if (u.timestamp) return Status::InvalidArgument("Cannot provide custom timestamp for counter updates");
    if (u.ttl) return Status::InvalidArgument("Cannot provide custom TTL for counter updates");
  }
  if (u.timestamp) {
    TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(*u.timestamp, CqlType::Scalar(TypeKind::kBigint), "[timestamp]", ctx.bind));
    if (b.kind == BoundValue::Kind::kNull) return Status::InvalidArgument("Invalid null value of timestamp");
    if (b.kind == BoundValue::Kind::kValue) m->timestamp_micros = static_cast<int64_t>(GetBigEndian64(b.bytes.data()));
  }
  if (u.ttl) {
    TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(*u.ttl, CqlType::Scalar(TypeKind::kInt), "[ttl]", ctx.bind));
    if (b.kind == BoundValue::Kind::kNull) return Status::InvalidArgument("Invalid null value of TTL");
    if (b.kind == BoundValue::Kind::kValue) {
      auto ttl = static_cast<int32_t>(GetBigEndian32(b.bytes.data()));
      if (ttl < 0) return Status::InvalidArgument("A TTL must be greater or equal to 0, but was " + std::to_string(ttl));
      if (ttl > kMaxTtl) return Status::InvalidArgument("ttl is too large. requested (" + std::to_string(ttl) + ") maximum (" + std::to_string(kMaxTtl) + ")");
      m->ttl_seconds = ttl;
    }
  }
  return Status::OK();
}

// Element cells of a non-frozen collection or user type value.
Status AddElements(const ColumnDef& col, const std::string& bytes, RowWrite* row, const BindContext& ctx,
                   bool prepend = false) {
  TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(col.type, bytes));
  const auto& p = col.type.params();
  auto ser = [](const CqlType& t, const Value& x) {
    std::string out;
    (void)Serialize(t, x, &out);
    return out;
  };
  if (col.type.kind() == TypeKind::kUdt) {  // one cell per field given; the others stay deleted
    const auto& fields = v.as_elements();
    for (size_t i = 0; i < fields.size() && i < p.size(); ++i) {
      if (!fields[i].is_null()) row->cells.push_back(CellWrite{col.id, ser(p[i], fields[i]), true, UserTypeFieldPath(i)});
    }
  } else if (col.type.kind() == TypeKind::kMap) {
    for (const auto& [k, val] : v.as_entries()) {
      row->cells.push_back(CellWrite{col.id, ser(p[1], val), true, ser(p[0], k)});
    }
  } else if (col.type.kind() == TypeKind::kSet) {
    for (const auto& e : v.as_elements()) row->cells.push_back(CellWrite{col.id, std::string(), true, ser(p[0], e)});
  } else {  // list: time-ordered element ids keep insertion order
    const auto& items = v.as_elements();
    uint64_t ticks = prepend ? PrependTicks(ctx.now_micros, items.size()) : AppendTicks(ctx.now_micros, items.size());
    for (const auto& e : items) row->cells.push_back(CellWrite{col.id, ser(p[0], e), true, ListElementId(ticks++, *ctx.rng)});
  }
  return Status::OK();
}

// The current elements (id, value) of a list column of one row.
Result<std::vector<std::pair<std::string, std::string>>> ReadList(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& t,
                                                                  const std::vector<std::string>& pk,
                                                                  const std::vector<std::string>& ck, const ColumnDef& col,
                                                                  const RequestConsistency& consistency) {
  std::vector<std::pair<std::string, std::string>> out;
  if (col.kind == ColumnKind::kStatic) {
    SliceRequest req;
    req.limit = 0;
    TESSERA_ASSIGN_OR_RETURN(SliceResult r, coordinator.ReadSlice(t, pk, req, consistency));
    if (!r.partition.static_row) return out;
    for (const auto& c : r.partition.static_row->cells) {
      if (c.column_id == col.id) out.emplace_back(c.path, c.value);
    }
    return out;
  }
  TESSERA_ASSIGN_OR_RETURN(auto row, coordinator.ReadRow(t, pk, ck, consistency));
  if (!row) return out;
  for (const auto& c : row->cells) {
    if (c.column_id == col.id) out.emplace_back(c.path, c.value);
  }
  return out;
}

// counter = counter + n | counter - n: an increment cell (the delta as a bigint).
Status AddToCounter(const ColumnDef& col, const Term& term, bool negate, RowWrite* row, const BindContext& ctx) {
  TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(term, CqlType::Scalar(TypeKind::kBigint), col.name, ctx));
  if (b.kind == BoundValue::Kind::kUnset) return Status::OK();
  if (b.kind == BoundValue::Kind::kNull) return Status::InvalidArgument("Invalid null value for counter increment");
  uint64_t delta = GetBigEndian64(b.bytes.data());
  if (negate) delta = 0 - delta;  // wraps, as Java's long
  std::string bytes;
  PutBigEndian64(&bytes, delta);
  CellWrite cell{col.id, std::move(bytes)};
  cell.counter = true;
  row->cells.push_back(std::move(cell));
  return Status::OK();
}

// col = value (INSERT or UPDATE SET).
Status AssignColumn(const ColumnDef& col, const BoundValue& b, RowWrite* row, const BindContext& ctx) {
  if (b.kind == BoundValue::Kind::kUnset) return Status::OK();
  if (col.type.kind() == TypeKind::kCounter) {
    return Status::InvalidArgument("Cannot set the value of counter column " + col.name +
                                   " (counters can only be incremented/decremented, not set)");
  }
  if (!col.type.IsMultiCell()) {
    row->cells.push_back(CellWrite{col.id, b.kind == BoundValue::Kind::kValue ? std::optional<std::string>(b.bytes) : std::nullopt});
    return Status::OK();
  }
  row->cells.push_back(CellWrite{col.id, std::nullopt, false, "", true});  // replaces the whole collection
  if (b.kind == BoundValue::Kind::kValue) TESSERA_RETURN_IF_ERROR(AddElements(col, b.bytes, row, ctx));
  return Status::OK();
}

// A list operation that needs the current list: l[i] = v, DELETE l[i], l = l - [..].
struct ListOp {
  enum class Kind { kSetIndex, kDeleteIndex, kRemoveValues } kind;
  const ColumnDef* column;
  int64_t index = 0;
  std::optional<std::string> value;   // kSetIndex; nullopt deletes the element
  std::vector<std::string> values;    // kRemoveValues, serialized elements
};

Status ApplyListOps(Coordinator& coordinator, const std::shared_ptr<const TableSchema>& t, const std::vector<std::string>& pk,
                    const std::vector<std::string>& ck, const std::vector<ListOp>& ops, RowWrite* row,
                    RowWrite* static_row, const WriteContext& ctx) {
  if (!ops.empty() && ctx.read_before_write) *ctx.read_before_write = true;
  for (const auto& op : ops) {
    TESSERA_ASSIGN_OR_RETURN(auto list, ReadList(coordinator, t, pk, ck, *op.column, ctx.consistency));
    RowWrite* target = op.column->kind == ColumnKind::kStatic ? static_row : row;
    if (op.kind == ListOp::Kind::kRemoveValues) {
      for (const auto& [id, value] : list) {
        if (std::find(op.values.begin(), op.values.end(), value) != op.values.end()) {
          target->cells.push_back(CellWrite{op.column->id, std::nullopt, true, id});
        }
      }
      continue;
    }
    if (op.index < 0 || op.index >= static_cast<int64_t>(list.size())) {
      return Status::InvalidArgument("List index " + std::to_string(op.index) + " out of bound, list has size " +
                                     std::to_string(list.size()));
    }
    const std::string& id = list[static_cast<size_t>(op.index)].first;
    target->cells.push_back(CellWrite{op.column->id, op.kind == ListOp::Kind::kSetIndex ? op.value : std::nullopt, true, id});
  }
  return Status::OK();
}

Result<int64_t> BindIndex(const Term& t, const ColumnDef& c, const BindContext& ctx) {
  TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(t, CqlType::Scalar(TypeKind::kInt), "idx(" + c.name + ")", ctx));
  if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value for list index of " + c.name);
  return static_cast<int64_t>(static_cast<int32_t>(GetBigEndian32(b.bytes.data())));
}

const ColumnDef* WritableColumn(const TableSchema& t, const std::string& name, Status* error) {
  const ColumnDef* c = t.FindColumn(name);
  if (!c) *error = Status::InvalidArgument("Undefined column name " + name);
  return c;
}

// Mutations for each partition, each with the given rows.
std::vector<Mutation> PerPartition(const std::shared_ptr<const TableSchema>& t, const WriteTarget& target,
                                   const Mutation& templ, const std::vector<RowWrite>& rows) {
  std::vector<Mutation> out;
  for (const auto& pk : target.partition_keys) {
    Mutation m = templ;
    m.table = t;
    m.partition_key = pk;
    m.rows = rows;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<const TableSchema>> ResolveTable(const Database& db, const QualifiedName& name,
                                                        const std::string& current) {
  const std::string ks = name.keyspace.empty() ? current : name.keyspace;
  if (ks.empty()) {
    return Status::InvalidArgument("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
  }
  if (!db.catalog().GetKeyspace(ks).ok()) return Status::InvalidArgument("Keyspace " + ks + " does not exist");
  auto t = db.GetTable(ks, name.name);
  if (!t.ok()) return Status::InvalidArgument("unconfigured table " + name.name);
  return t;
}

namespace {

// A table INSERT, UPDATE and DELETE may name: not a materialized view, whose
// rows only its base's writes make (Cassandra's words).
Result<std::shared_ptr<const TableSchema>> ResolveWritableTable(const Database& db, const QualifiedName& name,
                                                                const std::string& current) {
  TESSERA_ASSIGN_OR_RETURN(auto t, ResolveTable(db, name, current));
  if (t->is_view()) return Status::InvalidArgument("Cannot directly modify a materialized view");
  return t;
}

}  // namespace

Result<std::vector<Mutation>> BuildInsert(const Database& db, const InsertStatement& s, const WriteContext& ctx) {
  TESSERA_ASSIGN_OR_RETURN(auto t, ResolveWritableTable(db, s.table, ctx.keyspace));
  if (s.json) {
    TESSERA_ASSIGN_OR_RETURN(InsertStatement expanded, ExpandInsertJson(*t, s, ctx.bind));
    return BuildInsert(db, expanded, ctx);
  }
  if (s.columns.size() != s.values.size()) return Status::InvalidArgument("Unmatched column names/values");
  if (t->HasCounters()) return Status::InvalidArgument("INSERT statements are not allowed on counter tables, use UPDATE instead");
  Mutation m;
  m.table = t;
  TESSERA_RETURN_IF_ERROR(ApplyUsing(s.using_clause, ctx, &m));
  std::map<std::string, std::string> key_values;
  RowWrite row, static_row;
  row.insert = true;
  static_row.is_static = true;
  std::set<std::string> seen;
  for (size_t i = 0; i < s.columns.size(); ++i) {
    Status err;
    const ColumnDef* c = WritableColumn(*t, s.columns[i], &err);
    if (!c) return err;
    if (!seen.insert(c->name).second) return Status::InvalidArgument("Multiple definitions found for column " + c->name);
    TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(s.values[i], c->type, c->name, ctx.bind));
    if (c->kind == ColumnKind::kPartitionKey || c->kind == ColumnKind::kClustering) {
      if (b.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value in condition for column " + c->name);
      key_values[c->name] = b.bytes;
      continue;
    }
    TESSERA_RETURN_IF_ERROR(AssignColumn(*c, b, c->kind == ColumnKind::kStatic ? &static_row : &row, ctx.bind));
  }
  std::string missing;
  for (const auto* c : t->PartitionKey()) {
    if (!key_values.count(c->name)) missing += (missing.empty() ? "" : ", ") + c->name;
    else m.partition_key.push_back(key_values[c->name]);
  }
  if (!missing.empty()) return Status::InvalidArgument("Some partition key parts are missing: " + missing);
  size_t clustering_given = 0;
  for (const auto* c : t->Clustering()) {
    if (!key_values.count(c->name)) missing += (missing.empty() ? "" : ", ") + c->name;
    else row.clustering.push_back(key_values[c->name]);
    clustering_given += key_values.count(c->name);
  }
  // Only the partition key and static columns: a static-only insert (Cassandra allows it).
  bool static_only = clustering_given == 0 && row.cells.empty() && !static_row.cells.empty();
  if (!missing.empty() && !static_only) return Status::InvalidArgument("Some clustering keys are missing: " + missing);
  if (!static_only) m.rows.push_back(std::move(row));
  if (!static_row.cells.empty()) m.rows.push_back(std::move(static_row));
  return std::vector<Mutation>{std::move(m)};
}

Result<std::vector<Mutation>> BuildUpdate(Coordinator& coordinator, const UpdateStatement& s, const WriteContext& ctx) {
  Database& db = coordinator.database();
  TESSERA_ASSIGN_OR_RETURN(auto t, ResolveWritableTable(db, s.table, ctx.keyspace));
  const bool static_only = !s.assignments.empty() && std::all_of(s.assignments.begin(), s.assignments.end(), [&](const Assignment& a) {
    const ColumnDef* c = t->FindColumn(a.column);
    return c && c->kind == ColumnKind::kStatic;
  });
  TESSERA_ASSIGN_OR_RETURN(WriteTarget target, AnalyzeWriteWhere(*t, s.where, static_only ? WriteKind::kStaticUpdate : WriteKind::kUpdate, ctx.bind));
  Mutation templ;
  templ.table = t;
  TESSERA_RETURN_IF_ERROR(ApplyUsing(s.using_clause, ctx, &templ));
  RowWrite row, static_row;
  static_row.is_static = true;
  std::vector<ListOp> list_ops;
  for (const auto& a : s.assignments) {
    Status err;
    const ColumnDef* c = WritableColumn(*t, a.column, &err);
    if (!c) return err;
    if (c->kind == ColumnKind::kPartitionKey || c->kind == ColumnKind::kClustering) {
      return Status::InvalidArgument("PRIMARY KEY part " + c->name + " found in SET part");
    }
    RowWrite* target_row = c->kind == ColumnKind::kStatic ? &static_row : &row;
    const auto& p = c->type.params();
    switch (a.op) {
      case Assignment::Op::kSet: {
        TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(a.value, c->type, c->name, ctx.bind));
        TESSERA_RETURN_IF_ERROR(AssignColumn(*c, b, target_row, ctx.bind));
        break;
      }
      case Assignment::Op::kAppend: {
        if (c->type.kind() == TypeKind::kCounter) {
          TESSERA_RETURN_IF_ERROR(AddToCounter(*c, a.value, /*negate=*/false, target_row, ctx.bind));
          break;
        }
        if (!c->type.IsMultiCell() || !c->type.IsCollection()) {
          return Status::InvalidArgument("Invalid operation (" + c->name + " = " + c->name + " + ?) for non counter column " + c->name);
        }
        TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(a.value, c->type, c->name, ctx.bind));
        if (b.kind == BoundValue::Kind::kValue) TESSERA_RETURN_IF_ERROR(AddElements(*c, b.bytes, target_row, ctx.bind));
        break;
      }
      case Assignment::Op::kRemove: {
        if (c->type.kind() == TypeKind::kCounter) {
          TESSERA_RETURN_IF_ERROR(AddToCounter(*c, a.value, /*negate=*/true, target_row, ctx.bind));
          break;
        }
        if (!c->type.IsMultiCell() || !c->type.IsCollection()) {
          return Status::InvalidArgument("Invalid operation (" + c->name + " = " + c->name + " - ?) for non counter column " + c->name);
        }
        if (c->type.kind() == TypeKind::kList) {
          TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(a.value, c->type, c->name, ctx.bind));
          if (b.kind != BoundValue::Kind::kValue) break;
          TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(c->type, b.bytes));
          ListOp op{ListOp::Kind::kRemoveValues, c};
          for (const auto& e : v.as_elements()) {
            std::string bytes;
            TESSERA_RETURN_IF_ERROR(Serialize(p[0], e, &bytes));
            op.values.push_back(std::move(bytes));
          }
          list_ops.push_back(std::move(op));
          break;
        }
        // s - {e}: element tombstones; m - {k}: key tombstones (a set of keys).
        CqlType keys = CqlType::Set(p[0], true);
        TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(a.value, keys, c->name, ctx.bind));
        if (b.kind != BoundValue::Kind::kValue) break;
        TESSERA_ASSIGN_OR_RETURN(Value v, Deserialize(keys, b.bytes));
        for (const auto& e : v.as_elements()) {
          std::string path;
          TESSERA_RETURN_IF_ERROR(Serialize(p[0], e, &path));
          target_row->cells.push_back(CellWrite{c->id, std::nullopt, true, path});
        }
        break;
      }
      case Assignment::Op::kSetElement: {
        if (c->type.kind() == TypeKind::kList && c->type.IsMultiCell()) {
          TESSERA_ASSIGN_OR_RETURN(int64_t index, BindIndex(*a.key, *c, ctx.bind));
          TESSERA_ASSIGN_OR_RETURN(BoundValue v, BindTerm(a.value, p[0], c->name, ctx.bind));
          if (v.kind == BoundValue::Kind::kUnset) break;
          ListOp op{ListOp::Kind::kSetIndex, c, index};
          if (v.kind == BoundValue::Kind::kValue) op.value = v.bytes;
          list_ops.push_back(std::move(op));
          break;
        }
        if (c->type.kind() != TypeKind::kMap || !c->type.IsMultiCell()) {
          return Status::InvalidArgument("Invalid operation (" + c->name + "[?] = ?) for non-frozen-collection column " + c->name);
        }
        TESSERA_ASSIGN_OR_RETURN(BoundValue k, BindTerm(*a.key, p[0], c->name, ctx.bind));
        if (k.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null value for map key of " + c->name);
        TESSERA_ASSIGN_OR_RETURN(BoundValue v, BindTerm(a.value, p[1], c->name, ctx.bind));
        if (v.kind == BoundValue::Kind::kUnset) break;
        target_row->cells.push_back(CellWrite{c->id, v.kind == BoundValue::Kind::kValue ? std::optional<std::string>(v.bytes) : std::nullopt, true, k.bytes});
        break;
      }
      case Assignment::Op::kSetField: {
        const std::string op = c->name + "." + a.field + " = ?";
        if (c->type.kind() != TypeKind::kUdt) {
          return Status::InvalidArgument("Invalid operation (" + op + ") for non-UDT column " + c->name);
        }
        if (!c->type.IsMultiCell()) return Status::InvalidArgument("Invalid operation (" + op + ") for frozen UDT column " + c->name);
        std::optional<size_t> field = UserTypeFieldIndex(c->type, a.field);
        if (!field) return Status::InvalidArgument("UDT column " + c->name + " does not have a field named " + a.field);
        TESSERA_ASSIGN_OR_RETURN(BoundValue v, BindTerm(a.value, p[*field], c->name + "." + a.field, ctx.bind));
        if (v.kind == BoundValue::Kind::kUnset) break;
        target_row->cells.push_back(CellWrite{c->id, v.kind == BoundValue::Kind::kValue ? std::optional<std::string>(v.bytes) : std::nullopt,
                                              true, UserTypeFieldPath(*field)});
        break;
      }
      case Assignment::Op::kPrepend: {
        if (c->type.kind() != TypeKind::kList || !c->type.IsMultiCell()) {
          return Status::InvalidArgument("Invalid operation (" + c->name + " = ? + " + c->name + ") for non list column " + c->name);
        }
        TESSERA_ASSIGN_OR_RETURN(BoundValue b, BindTerm(a.value, c->type, c->name, ctx.bind));
        if (b.kind == BoundValue::Kind::kValue) TESSERA_RETURN_IF_ERROR(AddElements(*c, b.bytes, target_row, ctx.bind, /*prepend=*/true));
        break;
      }
      case Assignment::Op::kCounterAdd:
      case Assignment::Op::kCounterSubtract:
        TESSERA_RETURN_IF_ERROR(AddToCounter(*c, a.value, a.op == Assignment::Op::kCounterSubtract, target_row, ctx.bind));
        break;
    }
  }
  if (list_ops.empty()) {
    std::vector<RowWrite> rows;
    if (!static_row.cells.empty()) rows.push_back(static_row);
    for (const auto& ck : target.clustering) {
      RowWrite r = row;
      r.clustering = ck;
      if (!r.cells.empty()) rows.push_back(std::move(r));
    }
    return PerPartition(t, target, templ, rows);
  }
  // Operations on the current list: per row, after reading it.
  std::vector<Mutation> out;
  for (const auto& pk : target.partition_keys) {
    Mutation m = templ;
    m.table = t;
    m.partition_key = pk;
    RowWrite st = static_row;
    const std::vector<std::vector<std::string>> static_row_only{{}};  // an UPDATE of static columns alone
    for (const auto& ck : target.clustering.empty() ? static_row_only : target.clustering) {
      RowWrite r = row;
      r.clustering = ck;
      TESSERA_RETURN_IF_ERROR(ApplyListOps(coordinator, t, pk, ck, list_ops, &r, &st, ctx));
      if (!r.cells.empty()) m.rows.push_back(std::move(r));
    }
    if (!st.cells.empty()) m.rows.push_back(std::move(st));
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<Mutation>> BuildDelete(Coordinator& coordinator, const DeleteStatement& s, const WriteContext& ctx) {
  Database& db = coordinator.database();
  TESSERA_ASSIGN_OR_RETURN(auto t, ResolveWritableTable(db, s.table, ctx.keyspace));
  TESSERA_ASSIGN_OR_RETURN(WriteTarget target, AnalyzeWriteWhere(*t, s.where, WriteKind::kDelete, ctx.bind));
  Mutation templ;
  templ.table = t;
  TESSERA_RETURN_IF_ERROR(ApplyUsing(s.using_clause, ctx, &templ));
  const bool whole_rows = s.columns.empty();
  const bool has_slice = target.slice_start || target.slice_end;
  const bool only_static = !whole_rows && std::all_of(s.columns.begin(), s.columns.end(), [&](const auto& c) {
    const ColumnDef* def = t->FindColumn(c.column);
    return def && def->kind == ColumnKind::kStatic;
  });
  const bool names_rows = has_slice || target.clustering.size() != 1 || !target.clustering[0].empty();
  if (only_static && names_rows && !t->Clustering().empty()) {
    // Cassandra: naming rows while deleting only static columns suggests something unintended.
    return Status::InvalidArgument(
        "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns");
  }
  if (!whole_rows && !only_static && (!target.full_clustering || has_slice) && !t->Clustering().empty()) {
    return Status::InvalidArgument("Range deletions are not supported for specific columns");
  }
  std::vector<Mutation> out;
  // An empty IN on a clustering column (b IN (), or b IN ? bound to an empty
  // list) leaves no clustering prefix: it matches no row, so nothing is
  // deleted, as in Cassandra. Every branch below needs a prefix.
  if (target.clustering.empty()) return out;
  for (const auto& pk : target.partition_keys) {
    Mutation m = templ;
    m.table = t;
    m.partition_key = pk;
    if (whole_rows) {
      if (has_slice) {
        RangeDeletion rd;
        rd.start = target.slice_start.value_or(ClusteringBound{target.clustering[0], true});
        rd.end = target.slice_end.value_or(ClusteringBound{target.clustering[0], true});
        m.range_deletions.push_back(rd);
      } else if (target.full_clustering && !t->Clustering().empty()) {
        for (const auto& ck : target.clustering) m.rows.push_back(RowWrite{ck, false, false, true, {}});
      } else if (t->Clustering().empty() || target.clustering[0].empty()) {
        if (t->Clustering().empty()) m.rows.push_back(RowWrite{{}, false, false, true, {}});
        else m.delete_partition = true;
      } else {
        for (const auto& prefix : target.clustering) m.range_deletions.push_back({{prefix, true}, {prefix, true}});
      }
    } else {
      RowWrite row, static_row;
      static_row.is_static = true;
      std::vector<ListOp> list_ops;
      for (const auto& target_col : s.columns) {
        Status err;
        const ColumnDef* c = WritableColumn(*t, target_col.column, &err);
        if (!c) return err;
        if (c->kind == ColumnKind::kPartitionKey || c->kind == ColumnKind::kClustering) {
          return Status::InvalidArgument("Invalid identifier " + c->name + " for deletion (should not be a PRIMARY KEY part)");
        }
        RowWrite* r = c->kind == ColumnKind::kStatic ? &static_row : &row;
        if (!target_col.field.empty()) {  // DELETE udt.field
          if (c->type.kind() != TypeKind::kUdt) {
            return Status::InvalidArgument("Invalid deletion operation for non-UDT column " + c->name);
          }
          if (!c->type.IsMultiCell()) return Status::InvalidArgument("Frozen UDT column " + c->name + " does not support field deletion");
          std::optional<size_t> field = UserTypeFieldIndex(c->type, target_col.field);
          if (!field) return Status::InvalidArgument("UDT column " + c->name + " does not have a field named " + target_col.field);
          r->cells.push_back(CellWrite{c->id, std::nullopt, true, UserTypeFieldPath(*field)});
        } else if (target_col.key && c->type.kind() == TypeKind::kList && c->type.IsMultiCell()) {
          TESSERA_ASSIGN_OR_RETURN(int64_t index, BindIndex(*target_col.key, *c, ctx.bind));
          list_ops.push_back(ListOp{ListOp::Kind::kDeleteIndex, c, index});
        } else if (target_col.key) {
          if (c->type.kind() != TypeKind::kMap || !c->type.IsMultiCell()) {
            return Status::InvalidArgument("Invalid deletion of an element of non-collection column " + c->name);
          }
          TESSERA_ASSIGN_OR_RETURN(BoundValue k, BindTerm(*target_col.key, c->type.params()[0], c->name, ctx.bind));
          if (k.kind != BoundValue::Kind::kValue) return Status::InvalidArgument("Invalid null map key for " + c->name);
          r->cells.push_back(CellWrite{c->id, std::nullopt, true, k.bytes});
        } else if (c->type.IsMultiCell()) {
          r->cells.push_back(CellWrite{c->id, std::nullopt, false, "", true});
        } else {
          r->cells.push_back(CellWrite{c->id, std::nullopt});
        }
      }
      for (const auto& ck : target.clustering) {
        RowWrite rr = row;
        rr.clustering = ck;
        TESSERA_RETURN_IF_ERROR(ApplyListOps(coordinator, t, pk, ck, list_ops, &rr, &static_row, ctx));
        if (!rr.cells.empty()) m.rows.push_back(std::move(rr));
      }
      if (!static_row.cells.empty()) m.rows.push_back(static_row);
    }
    out.push_back(std::move(m));
  }
  return out;
}

Status CheckBatchCounters(BatchStatement::Type type, const std::vector<Mutation>& mutations) {
  bool counters = false, non_counters = false;
  for (const auto& m : mutations) {
    const bool counter = m.table->HasCounters();
    if (type == BatchStatement::Type::kCounter && !counter) {
      return Status::InvalidArgument("Cannot include non-counter statement in a counter batch");
    }
    if (type == BatchStatement::Type::kLogged && counter) {
      return Status::InvalidArgument("Cannot include a counter statement in a logged batch");
    }
    (counter ? counters : non_counters) = true;
  }
  if (counters && non_counters) {
    return Status::InvalidArgument("Counter and non-counter mutations cannot exist in the same batch");
  }
  return Status::OK();
}

}  // namespace tessera::cql
