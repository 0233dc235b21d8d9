// DescribeBindMarkers: the name and type of every bind marker of a statement,
// as PREPARED metadata reports them (Cassandra's receivers: the column, or
// [limit], [ttl], [timestamp], partition key token, in(col), key(col), idx(col),
// value(col)).
#include <map>

#include "common/bytes.h"
#include "cql/executor/modification_statements.h"
#include "cql/executor/query_processor.h"

namespace tessera::cql {
namespace {

class Describer {
 public:
  Describer(const TableSchema& t, size_t count) : t_(t), specs_(count) {}

  void Mark(const Term& term, const std::string& name, const CqlType& type) {
    if (term.kind == Term::Kind::kBindMarker && term.bind_index >= 0 && static_cast<size_t>(term.bind_index) < specs_.size()) {
      specs_[static_cast<size_t>(term.bind_index)] = ColumnSpec{t_.keyspace, t_.name, term.bind_name.empty() ? name : term.bind_name, type};
      return;
    }
    // bit_reverse(?, ?): a bigint and its preserve_sign flag.
    if (term.kind == Term::Kind::kFunctionCall) {
      if (AsciiLower(term.function_name) == "bit_reverse") {
        if (!term.elements.empty()) Mark(term.elements[0], name, CqlType::Scalar(TypeKind::kBigint));
        if (term.elements.size() > 1) Mark(term.elements[1], "preserve_sign", CqlType::Scalar(TypeKind::kBoolean));
      } else if (AsciiLower(term.function_name) == "fromjson" && !term.elements.empty()) {
        Mark(term.elements[0], name, CqlType::Scalar(TypeKind::kText));  // fromJson(?): the JSON text
      }
      return;
    }
    // Operands of arithmetic: the receiver's type (a duration right of a timestamp or date).
    if (term.kind == Term::Kind::kOperation) {
      const CqlType operand = type.kind() == TypeKind::kCounter ? CqlType::Scalar(TypeKind::kBigint) : type;
      const bool temporal = type.kind() == TypeKind::kTimestamp || type.kind() == TypeKind::kDate;
      for (size_t i = 0; i < term.elements.size(); ++i) {
        Mark(term.elements[i], name, i == 1 && temporal ? CqlType::Scalar(TypeKind::kDuration) : operand);
      }
      return;
    }
    // Markers inside collection or tuple literals: their element types.
    for (size_t i = 0; i < term.elements.size(); ++i) {
      const CqlType* et = nullptr;
      if (term.kind == Term::Kind::kUserType) {  // {field: ?}: the named field's type
        std::optional<size_t> f = type.kind() == TypeKind::kUdt ? UserTypeFieldIndex(type, term.field_names[i]) : std::nullopt;
        if (f) Mark(term.elements[i], name, type.params()[*f]);
        continue;
      }
      if (type.IsTupleLike() && i < type.params().size()) et = &type.params()[i];
      else if (type.IsCollection()) et = &type.params()[0];
      if (et) Mark(term.elements[i], name, *et);
    }
    for (const auto& v : term.map_values) {
      if (type.kind() == TypeKind::kMap) Mark(v, name, type.params()[1]);
    }
  }

  Status Relations(const std::vector<Relation>& where) {
    for (const auto& r : where) {
      if (r.lhs == Relation::Lhs::kToken) {
        const bool call = r.value.kind == Term::Kind::kFunctionCall && r.value.elements.size() == t_.PartitionKey().size();
        if (call) {  // token(?, ...): each marker is its partition key column
          const auto pk = t_.PartitionKey();
          for (size_t i = 0; i < pk.size(); ++i) Mark(r.value.elements[i], pk[i]->name, pk[i]->type);
        } else {
          Mark(r.value, "partition key token", CqlType::Scalar(TypeKind::kBigint));
        }
        continue;
      }
      std::vector<const ColumnDef*> cols;
      for (const auto& name : r.columns) {
        const ColumnDef* c = t_.FindColumn(name);
        if (!c) return Status::InvalidArgument("Undefined column name " + name);
        cols.push_back(c);
      }
      if (r.lhs == Relation::Lhs::kMultiColumn) {
        for (size_t i = 0; i < cols.size() && i < r.value.elements.size(); ++i) Mark(r.value.elements[i], cols[i]->name, cols[i]->type);
        continue;
      }
      const ColumnDef* c = cols[0];
      if (r.lhs == Relation::Lhs::kField) {  // IF udt.field ...: the field's type
        std::optional<size_t> f = c->type.kind() == TypeKind::kUdt ? UserTypeFieldIndex(c->type, r.field) : std::nullopt;
        if (!f) continue;
        const CqlType& ft = c->type.params()[*f];
        const std::string name = c->name + "." + r.field;
        if (r.op == Relation::Op::kIn && r.in_marker) Mark(r.value, "in(" + name + ")", CqlType::List(ft, true));
        for (const auto& v : r.in_values) Mark(v, name, ft);
        if (r.op != Relation::Op::kIn) Mark(r.value, name, ft);
        continue;
      }
      if (r.lhs == Relation::Lhs::kMapElement && c->type.kind() == TypeKind::kMap) {
        Mark(*r.map_key, "key(" + c->name + ")", c->type.params()[0]);
        Mark(r.value, "value(" + c->name + ")", c->type.params()[1]);
        continue;
      }
      if (r.lhs == Relation::Lhs::kMapElement && c->type.kind() == TypeKind::kList) {  // IF l[?] = ?
        Mark(*r.map_key, "idx(" + c->name + ")", CqlType::Scalar(TypeKind::kInt));
        Mark(r.value, "value(" + c->name + ")", c->type.params()[0]);
        continue;
      }
      if (r.op == Relation::Op::kIn) {
        if (r.in_marker) Mark(r.value, "in(" + c->name + ")", CqlType::List(c->type, true));
        for (const auto& v : r.in_values) Mark(v, c->name, c->type);
      } else if ((r.op == Relation::Op::kContains || r.op == Relation::Op::kContainsKey) && c->type.IsCollection()) {
        bool key = r.op == Relation::Op::kContainsKey;
        Mark(r.value, c->name, c->type.kind() == TypeKind::kMap && !key ? c->type.params()[1] : c->type.params()[0]);
      } else {
        Mark(r.value, c->name, c->type);
        if (r.op == Relation::Op::kEq && c->kind == ColumnKind::kPartitionKey && r.value.kind == Term::Kind::kBindMarker) {
          pk_markers_[c->name] = r.value.bind_index;
        }
      }
    }
    return Status::OK();
  }

  void Using(const Using& u) {
    if (u.ttl) Mark(*u.ttl, "[ttl]", CqlType::Scalar(TypeKind::kInt));
    if (u.timestamp) Mark(*u.timestamp, "[timestamp]", CqlType::Scalar(TypeKind::kBigint));
  }

  Status Statement(const RawStatement& s) {
    if (const auto* sel = std::get_if<SelectStatement>(&s)) {
      TESSERA_RETURN_IF_ERROR(Relations(sel->where));
      if (sel->ann) {
        const ColumnDef* c = t_.FindColumn(sel->ann->column);
        if (!c) return Status::InvalidArgument("Undefined column name " + sel->ann->column);
        Mark(sel->ann->vector, c->name, c->type);
      }
      if (sel->limit) Mark(*sel->limit, "[limit]", CqlType::Scalar(TypeKind::kInt));
      if (sel->per_partition_limit) Mark(*sel->per_partition_limit, "[per_partition_limit]", CqlType::Scalar(TypeKind::kInt));
    } else if (const auto* ins = std::get_if<InsertStatement>(&s)) {
      if (ins->json) Mark(*ins->json, "[json]", CqlType::Scalar(TypeKind::kText));
      for (size_t i = 0; i < ins->columns.size() && i < ins->values.size(); ++i) {
        const ColumnDef* c = t_.FindColumn(ins->columns[i]);
        if (!c) return Status::InvalidArgument("Undefined column name " + ins->columns[i]);
        Mark(ins->values[i], c->name, c->type);
        if (c->kind == ColumnKind::kPartitionKey && ins->values[i].kind == Term::Kind::kBindMarker) {
          pk_markers_[c->name] = ins->values[i].bind_index;
        }
      }
      Using(ins->using_clause);
    } else if (const auto* up = std::get_if<UpdateStatement>(&s)) {
      Using(up->using_clause);
      for (const auto& a : up->assignments) {
        const ColumnDef* c = t_.FindColumn(a.column);
        if (!c) return Status::InvalidArgument("Undefined column name " + a.column);
        if (a.op == Assignment::Op::kSetElement && c->type.kind() == TypeKind::kMap) {
          Mark(*a.key, "key(" + c->name + ")", c->type.params()[0]);
          Mark(a.value, "value(" + c->name + ")", c->type.params()[1]);
        } else if (a.op == Assignment::Op::kSetElement && c->type.kind() == TypeKind::kList) {  // l[?] = ?
          Mark(*a.key, "idx(" + c->name + ")", CqlType::Scalar(TypeKind::kInt));
          Mark(a.value, "value(" + c->name + ")", c->type.params()[0]);
        } else if (a.op == Assignment::Op::kSetField) {  // udt.field = ?: the field's type, named "udt.field"
          std::optional<size_t> f = c->type.kind() == TypeKind::kUdt ? UserTypeFieldIndex(c->type, a.field) : std::nullopt;
          if (f) Mark(a.value, c->name + "." + a.field, c->type.params()[*f]);
        } else if (a.op == Assignment::Op::kRemove && c->type.kind() == TypeKind::kMap) {
          Mark(a.value, c->name, CqlType::Set(c->type.params()[0], true));
        } else {
          Mark(a.value, c->name, c->type);
        }
      }
      TESSERA_RETURN_IF_ERROR(Relations(up->where));
      TESSERA_RETURN_IF_ERROR(Relations(up->conditions));  // IF col = ?: the column's name and type
    } else if (const auto* del = std::get_if<DeleteStatement>(&s)) {
      for (const auto& target : del->columns) {
        const ColumnDef* c = t_.FindColumn(target.column);
        if (c && target.key && c->type.kind() == TypeKind::kMap) Mark(*target.key, "key(" + c->name + ")", c->type.params()[0]);
        if (c && target.key && c->type.kind() == TypeKind::kList) Mark(*target.key, "idx(" + c->name + ")", CqlType::Scalar(TypeKind::kInt));
      }
      Using(del->using_clause);
      TESSERA_RETURN_IF_ERROR(Relations(del->where));
      TESSERA_RETURN_IF_ERROR(Relations(del->conditions));
    }
    return Status::OK();
  }

  std::vector<ColumnSpec> specs() const { return specs_; }
  std::vector<uint16_t> PartitionKeyIndexes() const {
    std::vector<uint16_t> out;
    for (const auto* c : t_.PartitionKey()) {
      auto it = pk_markers_.find(c->name);
      if (it == pk_markers_.end()) return {};
      out.push_back(static_cast<uint16_t>(it->second));
    }
    return out;
  }

 private:
  const TableSchema& t_;
  std::vector<ColumnSpec> specs_;
  std::map<std::string, int> pk_markers_;
};

// A marker no table types: a blob named ?i.
ColumnSpec UntypedMarker(size_t i) { return ColumnSpec{"", "", "?" + std::to_string(i), CqlType::Scalar(TypeKind::kBlob)}; }

const QualifiedName* TableOf(const RawStatement& s) {
  if (const auto* x = std::get_if<SelectStatement>(&s)) return &x->table;
  if (const auto* x = std::get_if<InsertStatement>(&s)) return &x->table;
  if (const auto* x = std::get_if<UpdateStatement>(&s)) return &x->table;
  if (const auto* x = std::get_if<DeleteStatement>(&s)) return &x->table;
  return nullptr;
}

}  // namespace

Status DescribeBindMarkers(const Database& db, const VirtualTables* vt, const ParsedStatement& parsed,
                           const std::string& keyspace, std::vector<ColumnSpec>* markers,
                           std::vector<uint16_t>* pk_indexes) {
  markers->clear();
  pk_indexes->clear();
  if (const auto* batch = std::get_if<BatchStatement>(&parsed.statement)) {
    // Each marker as the statement that holds it describes it (Cassandra
    // prepares a BATCH string too); the batch's USING markers with the first.
    const size_t count = static_cast<size_t>(parsed.bind_marker_count);
    std::vector<ColumnSpec> specs(count);
    for (size_t n = 0; n < batch->statements.size(); ++n) {
      const RawStatement sub = std::visit([](const auto& x) { return RawStatement(x); }, batch->statements[n]);
      TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableSchema> table, ResolveTable(db, *TableOf(sub), keyspace));
      Describer d(*table, count);
      TESSERA_RETURN_IF_ERROR(d.Statement(sub));
      if (n == 0) d.Using(batch->using_clause);
      const std::vector<ColumnSpec> described = d.specs();
      for (size_t i = 0; i < count; ++i) {
        if (!described[i].name.empty()) specs[i] = described[i];
      }
    }
    for (size_t i = 0; i < count; ++i) {
      if (specs[i].name.empty()) specs[i] = UntypedMarker(i);
    }
    *markers = std::move(specs);
    return Status::OK();
  }
  const QualifiedName* name = TableOf(parsed.statement);
  if (!name) {
    // DDL and the like: markers are not typed by a table; report them as blobs.
    for (int i = 0; i < parsed.bind_marker_count; ++i) markers->push_back(UntypedMarker(static_cast<size_t>(i)));
    return Status::OK();
  }
  const std::string ks = name->keyspace.empty() ? keyspace : name->keyspace;
  std::shared_ptr<const TableSchema> table = vt ? vt->Find(ks, name->name) : nullptr;
  if (!table) {
    TESSERA_ASSIGN_OR_RETURN(table, ResolveTable(db, *name, keyspace));
  }
  Describer d(*table, static_cast<size_t>(parsed.bind_marker_count));
  TESSERA_RETURN_IF_ERROR(d.Statement(parsed.statement));
  *markers = d.specs();
  *pk_indexes = d.PartitionKeyIndexes();
  return Status::OK();
}

}  // namespace tessera::cql
