#include "cql/executor/selection.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>

#include "common/bytes.h"
#include "cql/executor/arithmetic.h"
#include "cql/executor/cast.h"
#include "cql/executor/json_values.h"
#include "cql/executor/literals.h"
#include "cql/executor/term_binder.h"
#include "keys/token.h"
#include "types/serialization.h"
#include "types/value_compare.h"
#include "types/value_literal.h"

namespace tessera::cql {
namespace {

bool IsNumeric(TypeKind k) {
  return k == TypeKind::kTinyint || k == TypeKind::kSmallint || k == TypeKind::kInt || k == TypeKind::kBigint ||
         k == TypeKind::kFloat || k == TypeKind::kDouble || k == TypeKind::kCounter;
}

std::string SerializeNumber(const CqlType& type, long double v) {
  std::string out;
  switch (type.kind()) {
    case TypeKind::kFloat: (void)Serialize(type, Value::Float(static_cast<float>(v)), &out); break;
    case TypeKind::kDouble: (void)Serialize(type, Value::Double(static_cast<double>(v)), &out); break;
    default: {
      // Integer sums wrap in the column's width, as Cassandra's do.
      auto i = static_cast<int64_t>(v);
      int width = type.kind() == TypeKind::kTinyint ? 1 : type.kind() == TypeKind::kSmallint ? 2
                : type.kind() == TypeKind::kInt ? 4 : 8;
      PutBigEndian(&out, static_cast<uint64_t>(i), width);
    }
  }
  return out;
}

long double NumberOf(const CqlType& type, const std::string& bytes) {
  auto v = Deserialize(type, bytes);
  if (!v.ok()) return 0;
  if (type.kind() == TypeKind::kFloat) return v->as_float();
  if (type.kind() == TypeKind::kDouble) return v->as_double();
  return static_cast<long double>(v->as_int());
}

}  // namespace

// m[key] / s[elem]: the value (element) or null; m[a..b] / s[a..b]: the
// entries (elements) with keys in [a, b], null when none.
std::optional<std::string> Selection::SelectElements(const CqlType& type, const std::optional<std::string>& cell,
                                                     const Item& item) {
  if (!cell) return std::nullopt;
  auto value = Deserialize(type, *cell);
  if (!value.ok()) return std::nullopt;
  const CqlType& key_type = type.params()[0];
  auto in_range = [&](const Value& key) {
    if (item.kind == Item::Kind::kElement) return CompareValues(key_type, key, *item.from) == 0;
    return (!item.from || CompareValues(key_type, key, *item.from) >= 0) &&
           (!item.to || CompareValues(key_type, key, *item.to) <= 0);
  };
  std::string out;
  if (type.kind() == TypeKind::kMap) {
    std::vector<std::pair<Value, Value>> kept;
    for (const auto& [k, v] : value->as_entries()) {
      if (!in_range(k)) continue;
      if (item.kind == Item::Kind::kElement) return Serialize(type.params()[1], v, &out).ok() ? std::optional(out) : std::nullopt;
      kept.emplace_back(k, v);
    }
    if (kept.empty()) return std::nullopt;
    return Serialize(type, Value::Map(std::move(kept)), &out).ok() ? std::optional(out) : std::nullopt;
  }
  std::vector<Value> kept;
  for (const auto& e : value->as_elements()) {
    if (!in_range(e)) continue;
    if (item.kind == Item::Kind::kElement) return Serialize(key_type, e, &out).ok() ? std::optional(out) : std::nullopt;
    kept.push_back(e);
  }
  if (kept.empty()) return std::nullopt;
  return Serialize(type, Value::List(std::move(kept)), &out).ok() ? std::optional(out) : std::nullopt;
}

namespace {

// The type a literal operand takes: the other operand's (a duration beside a
// timestamp or date), else its own kind's (an integer the smallest of int,
// bigint, varint that holds it; a float a double).
Result<CqlType> LiteralType(const Term& term, const CqlType* hint) {
  const bool temporal_hint = hint && (hint->kind() == TypeKind::kTimestamp || hint->kind() == TypeKind::kDate);
  if (term.kind == Term::Kind::kDuration || (temporal_hint && term.kind == Term::Kind::kString)) {
    return CqlType::Scalar(TypeKind::kDuration);
  }
  const bool float_hint = hint && (hint->kind() == TypeKind::kFloat || hint->kind() == TypeKind::kDouble ||
                                   hint->kind() == TypeKind::kDecimal);
  if (term.kind == Term::Kind::kInteger) {
    if (hint && !temporal_hint && hint->kind() != TypeKind::kDuration) return *hint;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(term.text.c_str(), &end, 10);
    if (errno == ERANGE) return CqlType::Scalar(TypeKind::kVarint);
    return CqlType::Scalar(v >= INT32_MIN && v <= INT32_MAX ? TypeKind::kInt : TypeKind::kBigint);
  }
  if (term.kind == Term::Kind::kFloat) return float_hint ? *hint : CqlType::Scalar(TypeKind::kDouble);
  if (hint) return *hint;
  return Status::InvalidArgument("Cannot infer the type of " + term.text + " in an arithmetic operation");
}

// A selector of an arithmetic expression as an operand tree; `name` gets
// Cassandra's column name for it ("a + 2", "-b").
Result<ArithmeticOperand> BuildOperand(const TableSchema& t, const Selector& x, const CqlType* hint, std::string* name) {
  ArithmeticOperand e;
  switch (x.kind) {
    case Selector::Kind::kColumn: {
      const ColumnDef* c = t.FindColumn(x.name);
      if (!c) return Status::InvalidArgument("Undefined column name " + x.name);
      e.kind = ArithmeticOperand::Kind::kColumn;
      e.column = static_cast<size_t>(c - t.columns.data());
      e.type = c->type;
      *name = c->name;
      return e;
    }
    case Selector::Kind::kTerm: {
      if (x.term->kind == Term::Kind::kBindMarker || x.term->kind == Term::Kind::kFunctionCall ||
          x.term->kind == Term::Kind::kOperation) {
        return Status::InvalidArgument("Arithmetic operands in selections are columns, literals or operations");
      }
      TESSERA_ASSIGN_OR_RETURN(e.type, LiteralType(*x.term, hint));
      TESSERA_ASSIGN_OR_RETURN(Value v, LiteralToValue(*x.term, e.type, "arithmetic operand"));
      if (v.is_null()) return Status::InvalidArgument("Invalid null value in an arithmetic operation");
      TESSERA_RETURN_IF_ERROR(Serialize(e.type, v, &e.constant));
      e.kind = ArithmeticOperand::Kind::kConstant;
      *name = ValueLiteral(e.type, e.constant);
      return e;
    }
    case Selector::Kind::kOperation: {
      if (x.args.size() == 1) {
        std::string inner;
        TESSERA_ASSIGN_OR_RETURN(ArithmeticOperand arg, BuildOperand(t, x.args[0], hint, &inner));
        e.kind = ArithmeticOperand::Kind::kNegation;
        e.type = arg.type;
        TESSERA_RETURN_IF_ERROR(OperationType('-', e.type, e.type).status());
        e.args.push_back(std::move(arg));
        *name = "-" + inner;
        return e;
      }
      std::string left_name, right_name;
      ArithmeticOperand left, right;
      const char op = x.name[0];
      auto right_hint = [](const CqlType& l) {
        return l.kind() == TypeKind::kTimestamp || l.kind() == TypeKind::kDate ? CqlType::Scalar(TypeKind::kDuration) : l;
      };
      if (x.args[0].kind == Selector::Kind::kTerm && x.args[1].kind != Selector::Kind::kTerm) {
        TESSERA_ASSIGN_OR_RETURN(right, BuildOperand(t, x.args[1], nullptr, &right_name));
        TESSERA_ASSIGN_OR_RETURN(left, BuildOperand(t, x.args[0], &right.type, &left_name));
      } else {
        TESSERA_ASSIGN_OR_RETURN(left, BuildOperand(t, x.args[0], hint, &left_name));
        const CqlType rh = right_hint(left.type);
        TESSERA_ASSIGN_OR_RETURN(right, BuildOperand(t, x.args[1], &rh, &right_name));
      }
      TESSERA_ASSIGN_OR_RETURN(e.type, OperationType(op, left.type, right.type));
      e.kind = ArithmeticOperand::Kind::kOperation;
      e.op = op;
      e.args.push_back(std::move(left));
      e.args.push_back(std::move(right));
      *name = left_name + " " + x.name + " " + right_name;
      return e;
    }
    default:
      return Status::InvalidArgument("Arithmetic operands in selections are columns, literals or operations");
  }
}

}  // namespace

Result<Selection> Selection::Make(const TableSchema& t, const SelectStatement& s, const UserFunctions* functions) {
  Selection sel;
  sel.table_ = &t;
  for (const auto* c : t.PartitionKey()) sel.partition_key_columns_.push_back(static_cast<size_t>(c - t.columns.data()));
  auto spec = [&](const std::string& name, const CqlType& type) { return ColumnSpec{t.keyspace, t.name, name, type}; };
  if (s.star) {
    // Cassandra's order: partition key, clustering, then the other columns by name.
    std::vector<size_t> order;
    for (size_t i = 0; i < t.columns.size(); ++i) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      auto rank = [&](size_t i) { return t.columns[i].kind == ColumnKind::kPartitionKey ? 0 : t.columns[i].kind == ColumnKind::kClustering ? 1 : 2; };
      if (rank(a) != rank(b)) return rank(a) < rank(b);
      return rank(a) == 2 ? t.columns[a].name < t.columns[b].name : false;
    });
    for (size_t i : order) {
      sel.items_.push_back({Item::Kind::kColumn, i});
      sel.columns_.push_back(spec(t.columns[i].name, t.columns[i].type));
    }
    return sel;
  }
  for (const auto& x : s.selectors) {
    auto column_index = [&](const std::string& name) -> Result<size_t> {
      const ColumnDef* c = t.FindColumn(name);
      if (!c) return Status::InvalidArgument("Undefined column name " + name);
      return static_cast<size_t>(c - t.columns.data());
    };
    Item item{Item::Kind::kColumn, 0};
    std::string name;
    CqlType type = CqlType::Scalar(TypeKind::kBigint);
    switch (x.kind) {
      case Selector::Kind::kColumn: {
        TESSERA_ASSIGN_OR_RETURN(item.column, column_index(x.name));
        name = t.columns[item.column].name;
        type = t.columns[item.column].type;
        break;
      }
      case Selector::Kind::kWritetime:
      case Selector::Kind::kTtl: {
        TESSERA_ASSIGN_OR_RETURN(item.column, column_index(x.name));
        const ColumnDef& c = t.columns[item.column];
        bool wt = x.kind == Selector::Kind::kWritetime;
        if (c.kind == ColumnKind::kPartitionKey || c.kind == ColumnKind::kClustering) {
          return Status::InvalidArgument(std::string("Cannot use selection function ") + (wt ? "writeTime" : "ttl") +
                                         " on PRIMARY KEY part " + c.name);
        }
        if (c.type.IsMultiCell()) {
          return Status::InvalidArgument(std::string("Cannot use selection function ") + (wt ? "writeTime" : "ttl") +
                                         " on collections");
        }
        item.kind = wt ? Item::Kind::kWritetime : Item::Kind::kTtl;
        name = std::string(wt ? "writetime(" : "ttl(") + c.name + ")";
        type = CqlType::Scalar(wt ? TypeKind::kBigint : TypeKind::kInt);
        break;
      }
      case Selector::Kind::kCountStar:
        item.kind = Item::Kind::kCount;
        name = "count";
        break;
      case Selector::Kind::kFunction: {
        std::string fn = AsciiLower(x.name);
        if (functions != nullptr && !IsNativeFunction(fn) && functions->Exists(t.keyspace, fn)) {
          TESSERA_RETURN_IF_ERROR(MakeUserCall(t, x, *functions, &item, &name, &type));
          break;
        }
        if (auto similarity = SimilarityFunction(fn)) {
          TESSERA_RETURN_IF_ERROR(MakeSimilarityCall(t, x, *similarity, &item, &name, &type));
          break;
        }
        if (fn == "token") {
          if (t.distribution != Distribution::kHash) return Status::InvalidArgument("token() applies to hash-distributed tables");
          item.kind = Item::Kind::kToken;
          name = "system.token(" + std::to_string(x.args.size()) + ")";
          break;
        }
        // Time and identity functions (CQL reference, "Scalar functions").
        static const std::map<std::string, std::pair<Item::Kind, TypeKind>> kNoArg = {
            {"now", {Item::Kind::kNow, TypeKind::kTimeuuid}}, {"currenttimeuuid", {Item::Kind::kNow, TypeKind::kTimeuuid}},
            {"uuid", {Item::Kind::kUuid, TypeKind::kUuid}},
            {"currenttimestamp", {Item::Kind::kCurrentTimestamp, TypeKind::kTimestamp}},
            {"currentdate", {Item::Kind::kCurrentDate, TypeKind::kDate}},
            {"currenttime", {Item::Kind::kCurrentTime, TypeKind::kTime}}};
        static const std::map<std::string, std::pair<Item::Kind, TypeKind>> kConvert = {
            {"totimestamp", {Item::Kind::kToTimestamp, TypeKind::kTimestamp}},
            {"tounixtimestamp", {Item::Kind::kToUnixTimestamp, TypeKind::kBigint}},
            {"todate", {Item::Kind::kToDate, TypeKind::kDate}},
            // Cassandra 4.1's deprecated forms, for timeuuid arguments only.
            {"dateof", {Item::Kind::kToTimestamp, TypeKind::kTimestamp}},
            {"unixtimestampof", {Item::Kind::kToUnixTimestamp, TypeKind::kBigint}}};
        if (auto it = kNoArg.find(fn); it != kNoArg.end() && x.args.empty()) {
          item.kind = it->second.first;
          name = "system." + fn + "()";
          type = CqlType::Scalar(it->second.second);
          break;
        }
        if (auto it = kConvert.find(fn); it != kConvert.end() && x.args.size() == 1) {
          const Selector& arg = x.args[0];
          type = CqlType::Scalar(it->second.second);
          if (arg.kind == Selector::Kind::kFunction && (AsciiLower(arg.name) == "now" || AsciiLower(arg.name) == "currenttimeuuid")) {
            item.kind = it->second.first == Item::Kind::kToDate ? Item::Kind::kCurrentDate
                      : it->second.first == Item::Kind::kToTimestamp ? Item::Kind::kCurrentTimestamp
                      : Item::Kind::kToUnixTimestamp;
            item.column = SIZE_MAX;  // of now()
            name = "system." + fn + "(system.now())";
            break;
          }
          if (arg.kind != Selector::Kind::kColumn) return Status::InvalidArgument("Unsupported argument to " + x.name);
          TESSERA_ASSIGN_OR_RETURN(item.column, column_index(arg.name));
          TypeKind k = t.columns[item.column].type.kind();
          if ((fn == "dateof" || fn == "unixtimestampof") && k != TypeKind::kTimeuuid) {
            return Status::InvalidArgument("Type error: " + arg.name + " cannot be passed as argument 0 of function system." +
                                           fn + " of type timeuuid");
          }
          if (k != TypeKind::kTimeuuid && k != TypeKind::kTimestamp && k != TypeKind::kDate) {
            return Status::InvalidArgument(fn + " takes a timeuuid, timestamp or date argument");
          }
          item.kind = it->second.first;
          name = "system." + fn + "(" + arg.name + ")";
          break;
        }
        if (fn == "bit_reverse") {  // bit_reverse(bigint column [, true | false]): Spanner's BIT_REVERSE
          const bool two = x.args.size() == 2;
          // The selector grammar reads a bare true / false as a column name.
          const std::string flag = !two ? "false"
                                   : x.args[1].kind == Selector::Kind::kColumn ? x.args[1].name
                                   : x.args[1].term && x.args[1].term->kind == Term::Kind::kBoolean ? x.args[1].term->text
                                                                                                    : "";
          if (x.args.empty() || x.args.size() > 2 || x.args[0].kind != Selector::Kind::kColumn ||
              (flag != "true" && flag != "false")) {
            return Status::InvalidArgument("bit_reverse takes a bigint column and an optional boolean preserve_sign");
          }
          TESSERA_ASSIGN_OR_RETURN(item.column, column_index(x.args[0].name));
          if (t.columns[item.column].type.kind() != TypeKind::kBigint) {
            return Status::InvalidArgument("bit_reverse takes a bigint argument, not " +
                                           t.columns[item.column].type.ToCql());
          }
          item.kind = Item::Kind::kBitReverse;
          item.preserve_sign = flag == "true";
          name = "system.bit_reverse(" + x.args[0].name + ")";
          type = CqlType::Scalar(TypeKind::kBigint);
          break;
        }
        if (x.args.size() != 1 || x.args[0].kind != Selector::Kind::kColumn) {
          return Status::InvalidArgument("Unsupported selection function " + x.name);
        }
        TESSERA_ASSIGN_OR_RETURN(item.column, column_index(x.args[0].name));
        const ColumnDef& c = t.columns[item.column];
        if (fn == "count") {
          item.kind = Item::Kind::kCountColumn;
          name = "system.count(" + c.name + ")";
        } else if (fn == "min" || fn == "max") {
          item.kind = fn == "min" ? Item::Kind::kMin : Item::Kind::kMax;
          name = "system." + fn + "(" + c.name + ")";
          type = c.type;
        } else if (bool to_blob = false; auto native = BlobConversionType(fn, &to_blob)) {
          // <type>AsBlob(col) / blobAs<type>(col): the same bytes under another type.
          const CqlType& argument = to_blob ? *native : CqlType::Scalar(TypeKind::kBlob);
          const bool matches = c.type == argument || (argument.kind() == TypeKind::kText && c.type.kind() == TypeKind::kAscii);
          if (!matches) {
            return Status::InvalidArgument("Type error: " + c.name + " cannot be passed as argument 0 of function system." +
                                           fn + " of type " + argument.ToCql());
          }
          item.kind = to_blob ? Item::Kind::kColumn : Item::Kind::kBlobAs;
          item.blob_type = *native;
          name = "system." + fn + "(" + c.name + ")";
          type = to_blob ? CqlType::Scalar(TypeKind::kBlob) : *native;
        } else if (fn == "tojson") {
          item.kind = Item::Kind::kToJson;
          name = "system.tojson(" + c.name + ")";
          type = CqlType::Scalar(TypeKind::kText);
        } else if (fn == "sum" || fn == "avg") {
          if (!IsNumeric(c.type.kind())) return Status::InvalidArgument(fn + " is supported on integer and floating-point columns");
          item.kind = fn == "sum" ? Item::Kind::kSum : Item::Kind::kAvg;
          name = "system." + fn + "(" + c.name + ")";
          type = c.type;
        } else {
          return Status::InvalidArgument("Unknown function '" + x.name + "'");
        }
        break;
      }
      case Selector::Kind::kCast: {
        // CAST(col AS type): cast.h says which conversions exist.
        if (x.args.size() != 1 || x.args[0].kind != Selector::Kind::kColumn) {
          return Status::InvalidArgument("CAST takes a column: CAST(column AS type)");
        }
        TESSERA_ASSIGN_OR_RETURN(item.column, column_index(x.args[0].name));
        const ColumnDef& c = t.columns[item.column];
        auto target = CqlType::Parse(x.cast_type);
        if (!target.ok()) return Status::InvalidArgument("Unknown type " + x.cast_type);
        if (!CastSupported(c.type, *target)) {
          return Status::InvalidArgument("Cannot cast column " + c.name + " of type " + c.type.ToCql() + " to type " +
                                         target->ToCql());
        }
        item.kind = Item::Kind::kCast;
        item.blob_type = *target;
        name = "cast(" + c.name + " as " + target->ToCql() + ")";
        type = *target;
        break;
      }
      case Selector::Kind::kField: {
        // col.f1.f2: walk down to the column, then resolve each field of its user type.
        std::vector<const Selector*> chain{&x};
        while (chain.back()->kind == Selector::Kind::kField && !chain.back()->args.empty()) chain.push_back(&chain.back()->args[0]);
        if (chain.back()->kind != Selector::Kind::kColumn) {
          return Status::InvalidArgument("Field selection applies to columns of user types only");
        }
        TESSERA_ASSIGN_OR_RETURN(item.column, column_index(chain.back()->name));
        type = t.columns[item.column].type;
        name = t.columns[item.column].name;
        item.kind = Item::Kind::kField;
        for (size_t i = chain.size() - 1; i-- > 0;) {
          const std::string& field = chain[i]->name;
          if (type.kind() != TypeKind::kUdt) {
            return Status::InvalidArgument("Invalid field selection: " + name + " of type " + type.ToCql() +
                                           " is not a user type");
          }
          std::optional<size_t> index = UserTypeFieldIndex(type, field);
          if (!index) return Status::InvalidArgument(name + " of type " + type.ToCql() + " has no field " + field);
          item.fields.push_back(*index);
          type = type.params()[*index];
          name += "." + field;
        }
        break;
      }
      case Selector::Kind::kElement:
      case Selector::Kind::kSlice: {
        if (x.args.size() != 1 || x.args[0].kind != Selector::Kind::kColumn) {
          return Status::InvalidArgument("Element selection applies to columns of sets and maps");
        }
        TESSERA_ASSIGN_OR_RETURN(item.column, column_index(x.args[0].name));
        const ColumnDef& c = t.columns[item.column];
        if (!c.type.IsCollection()) {
          return Status::InvalidArgument("Invalid element selection: " + c.name + " is of type " + c.type.ToCql() +
                                         " is not a collection");
        }
        if (c.type.kind() == TypeKind::kList) {
          return Status::InvalidArgument("Element selection is only allowed on sets and maps, but " + c.name +
                                         " is a list");
        }
        const CqlType& key_type = c.type.params()[0];
        auto bound = [&](const std::optional<Term>& term, std::string* text) -> ::tessera::Result<std::optional<Value>> {
          if (!term) return std::optional<Value>();
          if (term->kind == Term::Kind::kBindMarker || term->kind == Term::Kind::kFunctionCall) {
            return Status::InvalidArgument("Element selection takes literals: bind markers and functions are not supported there");
          }
          TESSERA_ASSIGN_OR_RETURN(Value v, LiteralToValue(*term, key_type, c.name));
          if (v.is_null()) return Status::InvalidArgument("Invalid null value for element selection on " + c.name);
          std::string bytes;
          TESSERA_RETURN_IF_ERROR(Serialize(key_type, v, &bytes));
          *text = ValueLiteral(key_type, bytes);
          return std::optional<Value>(std::move(v));
        };
        std::string from_text, to_text;
        if (x.kind == Selector::Kind::kElement) {
          TESSERA_ASSIGN_OR_RETURN(item.from, bound(x.term, &from_text));
          item.kind = Item::Kind::kElement;
          name = c.name + "[" + from_text + "]";
          type = c.type.kind() == TypeKind::kMap ? c.type.params()[1] : key_type;
        } else {
          TESSERA_ASSIGN_OR_RETURN(item.from, bound(x.slice_from, &from_text));
          TESSERA_ASSIGN_OR_RETURN(item.to, bound(x.slice_to, &to_text));
          item.kind = Item::Kind::kSlice;
          name = c.name + "[" + from_text + ".." + to_text + "]";
          type = c.type;
        }
        break;
      }
      case Selector::Kind::kOperation: {
        TESSERA_ASSIGN_OR_RETURN(ArithmeticOperand expr, BuildOperand(t, x, nullptr, &name));
        type = expr.type;
        item.kind = Item::Kind::kOperation;
        item.expr = std::make_shared<const ArithmeticOperand>(std::move(expr));
        break;
      }
      default:
        return Status::InvalidArgument("Unsupported selector (literals are not supported yet)");
    }
    bool is_aggregate = item.kind == Item::Kind::kCount || item.kind == Item::Kind::kCountColumn ||
                        item.kind == Item::Kind::kUserAggregate ||
                        item.kind == Item::Kind::kMin || item.kind == Item::Kind::kMax ||
                        item.kind == Item::Kind::kSum || item.kind == Item::Kind::kAvg;
    if (is_aggregate) sel.aggregate_ = true;
    sel.items_.push_back(item);
    sel.columns_.push_back(spec(x.alias.empty() ? name : x.alias, type));
  }
  // Plain columns beside aggregates take the first row's value (of the group), as in Cassandra 2.2+.
  return sel;
}

std::vector<std::optional<std::string>> Selection::Project(const SourceRow& row, int64_t now_micros,
                                                           std::mt19937_64* rng, Status* failure) const {
  std::vector<std::optional<std::string>> out;
  out.reserve(items_.size());
  const int64_t now_ms = now_micros / 1000;
  auto millis_bytes = [](int64_t ms) { std::string b; PutBigEndian64(&b, static_cast<uint64_t>(ms)); return b; };
  auto date_bytes = [](int64_t ms) {
    int64_t days = ms >= 0 ? ms / 86'400'000 : -((-ms + 86'399'999) / 86'400'000);
    std::string b;
    PutBigEndian32(&b, static_cast<uint32_t>(days + (int64_t{1} << 31)));
    return b;
  };
  for (const auto& item : items_) {
    switch (item.kind) {
      case Item::Kind::kNow:
        out.push_back(rng ? std::optional<std::string>(MakeTimeUuid(now_micros, *rng)) : std::nullopt);
        continue;
      case Item::Kind::kUuid: {
        if (!rng) { out.emplace_back(); continue; }
        std::string u(16, '\0');
        for (int i = 0; i < 16; i += 8) {
          uint64_t r = (*rng)();
          for (int k = 0; k < 8; ++k) u[static_cast<size_t>(i + k)] = static_cast<char>(r >> (8 * k));
        }
        u[6] = static_cast<char>((u[6] & 0x0F) | 0x40);
        u[8] = static_cast<char>((u[8] & 0x3F) | 0x80);
        out.push_back(u);
        continue;
      }
      case Item::Kind::kCurrentTimestamp: out.push_back(millis_bytes(now_ms)); continue;
      case Item::Kind::kCurrentDate: out.push_back(date_bytes(now_ms)); continue;
      case Item::Kind::kCurrentTime: {
        std::string b;
        PutBigEndian64(&b, static_cast<uint64_t>(((now_ms % 86'400'000) + 86'400'000) % 86'400'000 * 1'000'000));
        out.push_back(b);
        continue;
      }
      case Item::Kind::kOperation: {
        auto v = EvaluateOperand(*item.expr, row.values);
        if (!v.ok()) {
          if (failure && failure->ok()) *failure = v.status();
          out.emplace_back();
          continue;
        }
        out.push_back(std::move(*v));
        continue;
      }
      case Item::Kind::kSimilarity:
        out.push_back(EvaluateSimilarity(item, row));
        continue;
      case Item::Kind::kUserFunction: {
        auto v = UserFunctions::Execute(*item.function, UserArguments(item, row));
        if (!v.ok() && failure && failure->ok()) *failure = v.status();
        out.push_back(v.ok() ? std::move(*v) : std::nullopt);
        continue;
      }
      case Item::Kind::kCast: {
        const auto& v = row.values[item.column];
        out.push_back(v ? CastValue(table_->columns[item.column].type, item.blob_type, *v) : std::nullopt);
        continue;
      }
      case Item::Kind::kElement:
      case Item::Kind::kSlice:
        out.push_back(SelectElements(table_->columns[item.column].type, row.values[item.column], item));
        continue;
      case Item::Kind::kField: {
        std::optional<std::string> v = row.values[item.column];
        for (size_t field : item.fields) {
          if (!v) break;
          v = SerializedComponent(*v, field);
        }
        out.push_back(std::move(v));
        continue;
      }
      case Item::Kind::kToJson: {  // never null: a null value is the JSON text null
        const ColumnDef& c = table_->columns[item.column];
        out.push_back(ValueToJson(c.type, row.values[item.column]));
        continue;
      }
      case Item::Kind::kBlobAs: {  // bytes that are no valid value of the type fail the query, as in Cassandra
        const auto& v = row.values[item.column];
        if (v && !ValidateSerialized(item.blob_type, *v).ok()) {
          if (failure && failure->ok()) {
            const std::string type = item.blob_type.ToCql();
            *failure = Status::InvalidArgument("In call to function system.blobas" + type + ", value 0x" + ToHex(*v) +
                                               " is not a valid binary representation for type " + type);
          }
          out.emplace_back();
          continue;
        }
        out.push_back(v);
        continue;
      }
      case Item::Kind::kBitReverse: {
        const auto& cell = row.values[item.column];
        if (!cell || cell->size() != 8) { out.emplace_back(); continue; }
        std::string b;
        PutBigEndian64(&b, static_cast<uint64_t>(BitReverse(static_cast<int64_t>(GetBigEndian64(cell->data())),
                                                            item.preserve_sign)));
        out.push_back(b);
        continue;
      }
      case Item::Kind::kToTimestamp:
      case Item::Kind::kToUnixTimestamp:
      case Item::Kind::kToDate: {
        std::optional<int64_t> ms = now_ms;
        if (item.column != SIZE_MAX) {
          const auto& cell = row.values[item.column];
          ms = cell ? MillisOf(table_->columns[item.column].type.kind(), *cell) : std::nullopt;
        }
        if (!ms) out.emplace_back();
        else out.push_back(item.kind == Item::Kind::kToDate ? date_bytes(*ms) : millis_bytes(*ms));
        continue;
      }
      default:
        break;
    }
    switch (item.kind) {
      case Item::Kind::kColumn:
        out.push_back(row.values[item.column]);
        break;
      case Item::Kind::kWritetime: {
        auto wt = row.writetime[item.column];
        if (!wt) {
          out.emplace_back();
        } else {
          std::string b;
          PutBigEndian64(&b, static_cast<uint64_t>(*wt));
          out.push_back(b);
        }
        break;
      }
      case Item::Kind::kTtl: {
        auto ttl = row.ttl[item.column];
        if (!ttl) {
          out.emplace_back();
        } else {
          std::string b;
          PutBigEndian32(&b, static_cast<uint32_t>(*ttl));
          out.push_back(b);
        }
        break;
      }
      case Item::Kind::kToken: {
        std::vector<std::string_view> parts;
        for (size_t i : partition_key_columns_) parts.emplace_back(row.values[i] ? *row.values[i] : std::string_view());
        std::string b;
        PutBigEndian64(&b, static_cast<uint64_t>(TokenOfPartitionKey(parts)));
        out.push_back(b);
        break;
      }
      default:
        out.emplace_back();
    }
  }
  return out;
}

std::vector<std::optional<std::string>> Selection::Aggregate(std::span<const SourceRow> rows, Status* failure) const {
  std::vector<std::optional<std::string>> out;
  for (const auto& item : items_) {
    const bool columnless = item.kind == Item::Kind::kCount || item.kind == Item::Kind::kUserAggregate ||
                            item.kind == Item::Kind::kUserFunction;
    const CqlType* type = columnless ? nullptr : &table_->columns[item.column].type;
    switch (item.kind) {
      case Item::Kind::kUserAggregate:
        out.push_back(FoldUserAggregate(item, rows, failure));
        break;
      case Item::Kind::kCount:
      case Item::Kind::kCountColumn: {
        int64_t n = 0;
        for (const auto& r : rows) n += item.kind == Item::Kind::kCount || r.values[item.column].has_value();
        std::string b;
        PutBigEndian64(&b, static_cast<uint64_t>(n));
        out.push_back(b);
        break;
      }
      case Item::Kind::kMin:
      case Item::Kind::kMax: {
        std::optional<std::string> best;
        std::optional<Value> best_value;
        for (const auto& r : rows) {
          const auto& v = r.values[item.column];
          if (!v) continue;
          auto value = Deserialize(*type, *v);
          if (!value.ok()) continue;
          int c = best_value ? CompareValues(*type, *value, *best_value) : 0;
          if (!best_value || (item.kind == Item::Kind::kMin ? c < 0 : c > 0)) {
            best = v;
            best_value = *value;
          }
        }
        out.push_back(best);
        break;
      }
      case Item::Kind::kSum:
      case Item::Kind::kAvg: {
        long double sum = 0;
        int64_t n = 0;
        for (const auto& r : rows) {
          if (!r.values[item.column]) continue;
          sum += NumberOf(*type, *r.values[item.column]);
          ++n;
        }
        long double result = item.kind == Item::Kind::kSum ? sum : (n ? sum / n : 0);
        if (item.kind == Item::Kind::kAvg && type->kind() != TypeKind::kFloat && type->kind() != TypeKind::kDouble) {
          result = n ? static_cast<long double>(static_cast<int64_t>(sum) / n) : 0;  // integer average, as Cassandra
        }
        out.push_back(SerializeNumber(*type, result));
        break;
      }
      default:
        out.push_back(rows.empty() ? std::nullopt : Project(rows.front(), 0, nullptr, failure)[out.size()]);
    }
  }
  return out;
}

}  // namespace tessera::cql
