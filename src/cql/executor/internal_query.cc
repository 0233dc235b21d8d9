#include "cql/executor/internal_query.h"

#include <random>

#include "cql/executor/modification_statements.h"
#include "cql/executor/schema_statements.h"
#include "cql/executor/select_statement.h"
#include "cql/parser/parser.h"

namespace tessera::cql {
namespace {

void PutInt(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

bool GetInt(const std::string& in, size_t* pos, uint32_t* v) {
  if (*pos + 4 > in.size()) return false;
  *v = 0;
  for (int i = 0; i < 4; ++i) *v = (*v << 8) | static_cast<unsigned char>(in[(*pos)++]);
  return true;
}

bool GetBytes(const std::string& in, size_t* pos, std::string* out) {
  uint32_t n;
  if (!GetInt(in, pos, &n) || n > in.size() - *pos) return false;
  *out = in.substr(*pos, n);
  *pos += n;
  return true;
}

Result<ResultSet> SchemaResult(const Result<SchemaOutcome>& r) {
  if (!r.ok()) return r.status();
  return ResultSet{};
}

}  // namespace

Result<ResultSet> ExecuteInternal(Database& db, const std::string& cql, const std::vector<WireValue>& values) {
  TESSERA_ASSIGN_OR_RETURN(auto parsed, ParseStatement(cql));
  thread_local std::mt19937_64 rng{std::random_device{}()};
  BindContext bind;
  bind.values = &values;
  bind.now_micros = db.NowMicros();
  bind.rng = &rng;
  const RawStatement& s = parsed.statement;
  if (const auto* sel = std::get_if<SelectStatement>(&s)) {
    SelectContext ctx{bind, "", 0, std::nullopt, db.guardrails()};
    return ExecuteSelect(db, nullptr, *sel, ctx);
  }
  WriteContext write{bind, "", std::nullopt};
  Result<std::vector<Mutation>> mutations = Status::InvalidArgument("not an internal statement: " + cql);
  if (const auto* x = std::get_if<InsertStatement>(&s)) mutations = BuildInsert(db, *x, write);
  else if (const auto* x = std::get_if<UpdateStatement>(&s)) mutations = BuildUpdate(db, *x, write);
  else if (const auto* x = std::get_if<DeleteStatement>(&s)) mutations = BuildDelete(db, *x, write);
  else if (const auto* x = std::get_if<CreateKeyspaceStatement>(&s)) return SchemaResult(ExecuteCreateKeyspace(db, *x));
  else if (const auto* x = std::get_if<CreateTableStatement>(&s)) return SchemaResult(ExecuteCreateTable(db, *x, ""));
  if (!mutations.ok()) return mutations.status();
  TESSERA_RETURN_IF_ERROR(db.ApplyBatch(*mutations));
  return ResultSet{};
}

WireValue TextValue(const std::string& text) { return WireValue::Of(text); }

WireValue BooleanValue(bool value) { return WireValue::Of(std::string(1, value ? '\1' : '\0')); }

WireValue TextSetValue(const std::set<std::string>& values) {
  std::string out;
  PutInt(&out, static_cast<uint32_t>(values.size()));
  for (const auto& v : values) {
    PutInt(&out, static_cast<uint32_t>(v.size()));
    out += v;
  }
  return WireValue::Of(out);
}

WireValue TextMapValue(const std::map<std::string, std::string>& values) {
  std::string out;
  PutInt(&out, static_cast<uint32_t>(values.size()));
  for (const auto& [k, v] : values) {
    PutInt(&out, static_cast<uint32_t>(k.size()));
    out += k;
    PutInt(&out, static_cast<uint32_t>(v.size()));
    out += v;
  }
  return WireValue::Of(out);
}

bool BooleanOf(const std::optional<std::string>& cell) { return cell && cell->size() == 1 && (*cell)[0] != 0; }

std::set<std::string> TextSetOf(const std::optional<std::string>& cell) {
  std::set<std::string> out;
  if (!cell) return out;
  size_t pos = 0;
  uint32_t n;
  if (!GetInt(*cell, &pos, &n)) return out;
  for (uint32_t i = 0; i < n; ++i) {
    std::string v;
    if (!GetBytes(*cell, &pos, &v)) break;
    out.insert(v);
  }
  return out;
}

std::map<std::string, std::string> TextMapOf(const std::optional<std::string>& cell) {
  std::map<std::string, std::string> out;
  if (!cell) return out;
  size_t pos = 0;
  uint32_t n;
  if (!GetInt(*cell, &pos, &n)) return out;
  for (uint32_t i = 0; i < n; ++i) {
    std::string k, v;
    if (!GetBytes(*cell, &pos, &k) || !GetBytes(*cell, &pos, &v)) break;
    out[k] = v;
  }
  return out;
}

}  // namespace tessera::cql
