#include "cql/executor/source_rows.h"

#include <algorithm>
#include <map>

#include "common/bytes.h"
#include "keys/storage_key.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera::cql {
namespace {

void PutBytes(std::string* out, const std::string& b) {
  PutBigEndian32(out, static_cast<uint32_t>(b.size()));
  out->append(b);
}

}  // namespace

// ---- storage rows -> SourceRow ----


// A non-frozen collection's value from its element cells (sorted by path).
std::string AssembleCollection(const CqlType& type, const std::vector<const Cell*>& cells) {
  if (type.kind() == TypeKind::kUdt) {  // fields by index; absent ones null, trailing ones omitted
    std::vector<const std::string*> fields;
    for (const Cell* c : cells) {
      std::optional<size_t> f = UserTypeFieldOfPath(c->path);
      if (!f || *f >= type.params().size()) continue;
      if (fields.size() <= *f) fields.resize(*f + 1, nullptr);
      fields[*f] = &c->value;
    }
    std::string out;
    for (const std::string* f : fields) {
      if (f) PutBytes(&out, *f);
      else PutBigEndian32(&out, 0xFFFFFFFFu);
    }
    return out;
  }
  std::string body;
  for (const Cell* c : cells) {
    if (type.kind() == TypeKind::kList) PutBytes(&body, c->value);
    else if (type.kind() == TypeKind::kSet) PutBytes(&body, c->path);
    else {
      PutBytes(&body, c->path);
      PutBytes(&body, c->value);
    }
  }
  std::string out;
  PutBigEndian32(&out, static_cast<uint32_t>(cells.size()));
  return out + body;
}

void AddCells(const TableSchema& t, const RowResult& row, uint32_t now, SourceRow* out) {
  std::map<uint32_t, std::vector<const Cell*>> by_column;
  for (const auto& c : row.cells) by_column[c.column_id].push_back(&c);
  for (const auto& [id, cells] : by_column) {
    const ColumnDef* def = t.FindColumnById(id);
    if (!def) continue;  // a dropped column
    size_t i = static_cast<size_t>(def - t.columns.data());
    if (def->type.IsMultiCell()) {
      out->values[i] = AssembleCollection(def->type, cells);
      continue;
    }
    const Cell* c = cells.front();
    out->values[i] = c->value;
    out->writetime[i] = c->timestamp;
    if (c->IsExpiring()) out->ttl[i] = static_cast<int32_t>(c->local_deletion_time - now);
  }
}

SourceRow MakeRow(const TableSchema& t, const std::vector<std::string>& pk, const RowResult* row,
                  const RowResult* static_row, uint32_t now) {
  SourceRow r;
  r.values.resize(t.columns.size());
  r.writetime.resize(t.columns.size());
  r.ttl.resize(t.columns.size());
  auto pk_cols = t.PartitionKey();
  for (size_t i = 0; i < pk_cols.size(); ++i) r.values[static_cast<size_t>(pk_cols[i] - t.columns.data())] = pk[i];
  if (row) {
    auto ck = t.Clustering();
    for (size_t i = 0; i < ck.size() && i < row->clustering.size(); ++i) {
      r.values[static_cast<size_t>(ck[i] - t.columns.data())] = row->clustering[i];
    }
    AddCells(t, *row, now, &r);
  } else {
    r.static_only = true;
  }
  if (static_row) AddCells(t, *static_row, now, &r);
  return r;
}

// ---- filters ----

bool Matches(const TableSchema& t, const Filter& f, const SourceRow& row) {
  const auto& cell = row.values[f.column];
  if (f.op == Relation::Op::kIsNotNull) return cell.has_value();
  if (!cell) return false;
  const CqlType& type = t.columns[f.column].type;
  auto value = Deserialize(type, *cell);
  if (!value.ok()) return false;
  if (f.op == Relation::Op::kContains || f.op == Relation::Op::kContainsKey) {
    bool key = f.op == Relation::Op::kContainsKey;
    const CqlType& et = type.kind() == TypeKind::kMap && !key ? type.params()[1] : type.params()[0];
    auto needle = Deserialize(et, f.values[0]);
    if (!needle.ok()) return false;
    if (type.kind() == TypeKind::kMap) {
      for (const auto& [k, v] : value->as_entries()) {
        if (CompareValues(et, key ? k : v, *needle) == 0) return true;
      }
      return false;
    }
    for (const auto& e : value->as_elements()) {
      if (CompareValues(et, e, *needle) == 0) return true;
    }
    return false;
  }
  const CqlType* ct = &type;
  Value subject = *value;
  if (f.map_key) {
    auto k = Deserialize(type.params()[0], *f.map_key);
    if (!k.ok()) return false;
    bool found = false;
    for (const auto& [mk, mv] : value->as_entries()) {
      if (CompareValues(type.params()[0], mk, *k) == 0) {
        subject = mv;
        found = true;
      }
    }
    if (!found) return false;
    ct = &type.params()[1];
  }
  auto cmp = [&](const std::string& bytes) {
    auto other = Deserialize(*ct, bytes);
    return other.ok() ? CompareValues(*ct, subject, *other) : 2;
  };
  switch (f.op) {
    case Relation::Op::kEq: return cmp(f.values[0]) == 0;
    case Relation::Op::kNe: return cmp(f.values[0]) != 0;
    case Relation::Op::kLt: return cmp(f.values[0]) < 0;
    case Relation::Op::kLe: return cmp(f.values[0]) <= 0;
    case Relation::Op::kGt: { int c = cmp(f.values[0]); return c > 0 && c != 2; }
    case Relation::Op::kGe: { int c = cmp(f.values[0]); return c >= 0 && c != 2; }
    case Relation::Op::kIn:
      return std::any_of(f.values.begin(), f.values.end(), [&](const std::string& v) { return cmp(v) == 0; });
    default: return false;
  }
}

bool MatchesAll(const TableSchema& t, const ReadPlan& plan, const SourceRow& row) {
  return std::all_of(plan.filters.begin(), plan.filters.end(), [&](const Filter& f) { return Matches(t, f, row); });
}

// Whether a computed row (system tables) lies within the plan's clustering
// prefixes and slice, compared as encoded keys (memcmp order is clustering order).
bool WithinClustering(const TableSchema& t, const ReadPlan& plan, const SourceRow& row) {
  std::vector<std::string_view> ck;
  for (const auto* c : t.Clustering()) {
    const auto& v = row.values[static_cast<size_t>(c - t.columns.data())];
    if (!v) return false;
    ck.push_back(*v);
  }
  std::string key;
  if (!EncodeClusteringPrefix(t, ck, &key).ok()) return false;
  auto encode = [&](const std::vector<std::string>& prefix) {
    std::string out;
    return EncodeClusteringPrefix(t, {prefix.begin(), prefix.end()}, &out).ok() ? std::optional<std::string>(out)
                                                                                 : std::nullopt;
  };
  bool in_prefix = false;
  for (const auto& p : plan.clustering_prefixes) {
    auto e = encode(p);
    in_prefix = in_prefix || (e && key.starts_with(*e));
  }
  if (!in_prefix) return false;
  if (plan.lower && !plan.lower->prefix.empty()) {
    auto e = encode(plan.lower->prefix);
    if (!e) return false;
    const bool at = key.starts_with(*e);
    if (plan.lower->inclusive ? (key < *e) : (at || key < *e)) return false;
  }
  if (plan.upper && !plan.upper->prefix.empty()) {
    auto e = encode(plan.upper->prefix);
    if (!e) return false;
    const bool at = key.starts_with(*e);
    if (plan.upper->inclusive ? (!at && key > *e) : (at || key > *e)) return false;
  }
  return true;
}

// ---- paging state ----

std::string EncodePaging(const PagingState& p, uint8_t kind) {
  std::string s(1, '\x01');
  s.push_back(static_cast<char>(kind));
  PutVarint64(&s, p.partition);
  PutVarint64(&s, p.prefix);
  PutVarint64(&s, p.rows_so_far);
  PutVarint64(&s, p.rows_in_partition);
  return s + p.cursor;
}

Result<PagingState> DecodePaging(const std::string& s, uint8_t kind) {
  ByteReader r(s);
  uint8_t version, k;
  PagingState p;
  if (!r.ReadByte(&version) || version != 1 || !r.ReadByte(&k) || k != kind || !r.ReadVarint64(&p.partition) ||
      !r.ReadVarint64(&p.prefix) || !r.ReadVarint64(&p.rows_so_far) || !r.ReadVarint64(&p.rows_in_partition)) {
    return Status::InvalidArgument("Invalid paging state");
  }
  p.cursor.assign(r.rest());
  return p;
}

}  // namespace tessera::cql
