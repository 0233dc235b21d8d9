#include "cql/executor/internal_query.h"

#include <exception>
#include <memory>
#include <optional>
#include <random>

#include "cql/executor/modification_statements.h"
#include "cql/executor/replayed_read.h"
#include "cql/executor/schema_statements.h"
#include "cql/executor/select_statement.h"
#include "cql/parser/parser.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

const CqlType& TextSet() {
  static const CqlType type = CqlType::Set(CqlType::Scalar(TypeKind::kText), false);
  return type;
}

const CqlType& TextMap() {
  static const CqlType type = CqlType::Map(CqlType::Scalar(TypeKind::kText), CqlType::Scalar(TypeKind::kText), false);
  return type;
}

// A value that does not fit its type (text that is not UTF-8) gives bytes
// the statement's binding then refuses (Invalid), never a silent null.
WireValue Serialized(const CqlType& type, const Value& value) {
  std::string out;
  (void)Serialize(type, value, &out);
  return WireValue::Of(std::move(out));
}

Result<ResultSet> SchemaResult(const Result<SchemaOutcome>& r) {
  if (!r.ok()) return r.status();
  return ResultSet{};
}

}  // namespace

Result<ResultSet> ExecuteInternal(Coordinator& coordinator, const std::string& cql, const std::vector<WireValue>& values,
                                  const RequestConsistency& consistency) {
  Database& db = coordinator.database();
  TESSERA_ASSIGN_OR_RETURN(auto parsed, ParseStatement(cql));
  BindContext bind;
  bind.values = &values;
  bind.now_micros = db.NowMicros();
  bind.rng = &ThreadRandom();
  const RawStatement& s = parsed.statement;
  if (const auto* sel = std::get_if<SelectStatement>(&s)) {
    SelectContext ctx{bind, "", 0, std::nullopt, db.guardrails(), consistency};
    return ExecuteSelect(coordinator, nullptr, *sel, ctx);
  }
  WriteContext write{bind, "", std::nullopt, consistency};
  Result<std::vector<Mutation>> mutations = Status::InvalidArgument("not an internal statement: " + cql);
  if (const auto* x = std::get_if<InsertStatement>(&s)) mutations = BuildInsert(db, *x, write);
  else if (const auto* x = std::get_if<UpdateStatement>(&s)) mutations = BuildUpdate(coordinator, *x, write);
  else if (const auto* x = std::get_if<DeleteStatement>(&s)) mutations = BuildDelete(coordinator, *x, write);
  else if (const auto* x = std::get_if<CreateKeyspaceStatement>(&s)) return SchemaResult(ExecuteCreateKeyspace(db, *x));
  else if (const auto* x = std::get_if<CreateTableStatement>(&s)) return SchemaResult(ExecuteCreateTable(db, *x, ""));
  if (!mutations.ok()) return mutations.status();
  TESSERA_RETURN_IF_ERROR(coordinator.ApplyBatch(*mutations, nullptr, consistency));
  return ResultSet{};
}

namespace {

// One SelectInternalAsync: its statement and values, and the reads its runs made.
struct InternalSelect {
  Coordinator* coordinator = nullptr;
  SelectStatement statement;
  std::vector<WireValue> values;
  SelectContext ctx;  // bind.values -> values, deferred -> deferred
  DeferredRead deferred;
  std::function<void(Result<ResultSet>)> done;
};

void RunInternalSelect(const std::shared_ptr<InternalSelect>& select) {
  std::optional<Result<ResultSet>> rs;
  try {
    select->ctx.bind.rng = &ThreadRandom();  // this thread's
    select->deferred.table = nullptr;        // set again by a read still to make
    rs.emplace(ExecuteSelect(*select->coordinator, nullptr, select->statement, select->ctx));
  } catch (const std::exception& e) {  // on a replica answer's thread: answer it, never end the process
    return select->done(Status::IOError(std::string("internal error: ") + e.what()));
  }
  if (select->deferred.table &&
      ReadReplayedAsync(*select->coordinator, &select->deferred.replayed, select->ctx.consistency,
                        [select] { RunInternalSelect(select); })) {
    return;
  }
  select->done(std::move(*rs));
}

}  // namespace

void SelectInternalAsync(Coordinator& coordinator, const std::string& cql, std::vector<WireValue> values,
                         const RequestConsistency& consistency, std::function<void(Result<ResultSet>)> done) {
  auto parsed = ParseStatement(cql);
  if (!parsed.ok()) return done(parsed.status());
  const auto* sel = std::get_if<SelectStatement>(&parsed->statement);
  if (sel == nullptr) return done(Status::InvalidArgument("not an internal SELECT: " + cql));
  auto select = std::make_shared<InternalSelect>();
  select->coordinator = &coordinator;
  select->statement = *sel;
  select->values = std::move(values);
  Database& db = coordinator.database();
  BindContext bind;
  bind.values = &select->values;
  bind.now_micros = db.NowMicros();
  select->ctx = SelectContext{bind, "", 0, std::nullopt, db.guardrails(), consistency};
  select->ctx.deferred = &select->deferred;
  select->ctx.defer_read = false;
  select->deferred.replay = true;
  select->done = std::move(done);
  RunInternalSelect(select);
}

WireValue TextValue(const std::string& text) { return WireValue::Of(text); }

WireValue BooleanValue(bool value) { return Serialized(CqlType::Scalar(TypeKind::kBoolean), Value::Boolean(value)); }

WireValue TextSetValue(const std::set<std::string>& values) {
  std::vector<Value> items;
  for (const auto& v : values) items.push_back(Value::Bytes(v));
  return Serialized(TextSet(), Value::List(std::move(items)));
}

WireValue TextMapValue(const std::map<std::string, std::string>& values) {
  std::vector<std::pair<Value, Value>> entries;
  for (const auto& [k, v] : values) entries.emplace_back(Value::Bytes(k), Value::Bytes(v));
  return Serialized(TextMap(), Value::Map(std::move(entries)));
}

bool BooleanOf(const std::optional<std::string>& cell) {
  if (!cell) return false;
  auto v = Deserialize(CqlType::Scalar(TypeKind::kBoolean), *cell);
  return v.ok() && !v->is_null() && v->as_bool();
}

std::set<std::string> TextSetOf(const std::optional<std::string>& cell) {
  std::set<std::string> out;
  if (!cell) return out;
  auto v = Deserialize(TextSet(), *cell);
  if (!v.ok() || v->is_null()) return out;
  for (const auto& e : v->as_elements()) out.insert(e.as_bytes());
  return out;
}

std::map<std::string, std::string> TextMapOf(const std::optional<std::string>& cell) {
  std::map<std::string, std::string> out;
  if (!cell) return out;
  auto v = Deserialize(TextMap(), *cell);
  if (!v.ok() || v->is_null()) return out;
  for (const auto& [k, val] : v->as_entries()) out[k.as_bytes()] = val.as_bytes();
  return out;
}

}  // namespace tessera::cql
