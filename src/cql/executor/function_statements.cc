#include "cql/executor/function_statements.h"

#include <set>

#include "common/bytes.h"
#include "cql/executor/literals.h"
#include "types/serialization.h"
#include "types/value_literal.h"

namespace tessera::cql {
namespace {

Result<std::vector<CqlType>> ParseTypes(const Database& db, const std::string& ks, const std::vector<std::string>& texts) {
  const UserTypeLookup lookup = db.catalog().TypeLookup(ks);
  std::vector<CqlType> out;
  for (const auto& text : texts) {
    auto type = CqlType::Parse(text, &lookup);
    if (!type.ok()) return Status::InvalidArgument("Unknown type " + text);
    out.push_back(*type);
  }
  return out;
}

Result<SchemaOutcome> CreateFunction(Database& db, const UserFunctions& functions, const FunctionStatement& s,
                                     const std::string& ks) {
  UserFunction f;
  f.keyspace = ks;
  f.name = s.name.name;
  f.language = AsciiLower(s.language);
  f.body = s.body;
  f.called_on_null_input = s.called_on_null_input;
  const std::string full = ks + "." + f.name;
  if (f.language != "lua") {
    return Status::InvalidArgument("Invalid language '" + s.language + "' for function '" + full +
                                   "': Tessera runs user-defined functions in lua");
  }
  std::set<std::string> names;
  std::vector<std::string> type_texts;
  for (const auto& [name, type] : s.arguments) {
    if (!names.insert(name).second) {
      return Status::InvalidArgument("Duplicate argument names for given function " + full + " with argument names " + name);
    }
    f.argument_names.push_back(name);
    type_texts.push_back(type);
  }
  TESSERA_ASSIGN_OR_RETURN(f.argument_types, ParseTypes(db, ks, type_texts));
  TESSERA_ASSIGN_OR_RETURN(auto returned, ParseTypes(db, ks, {s.return_type}));
  f.return_type = returned[0];
  // The body must compile (and its types be Lua's) before it is recorded.
  TESSERA_RETURN_IF_ERROR(LuaFunction::Compile(f, functions.limits()).status());
  bool existed = false;
  for (const auto& other : functions.FunctionOverloads(ks, f.name)) existed |= other.argument_types == f.argument_types;
  Status st = db.CreateFunction(f, s.or_replace);
  if (st.IsAlreadyExists() && s.if_not_exists) return SchemaOutcome{};
  TESSERA_RETURN_IF_ERROR(st);
  return SchemaOutcome{SchemaChange{existed ? "UPDATED" : "CREATED", "FUNCTION", ks, f.name, TypeTexts(f.argument_types)}};
}

Result<SchemaOutcome> CreateAggregate(Database& db, const UserFunctions& functions, const FunctionStatement& s,
                                      const std::string& ks) {
  UserAggregate a;
  a.keyspace = ks;
  a.name = s.name.name;
  TESSERA_ASSIGN_OR_RETURN(a.argument_types, ParseTypes(db, ks, s.argument_types));
  TESSERA_ASSIGN_OR_RETURN(auto state_type, ParseTypes(db, ks, {s.state_type}));
  a.state_type = state_type[0];
  // SFUNC / FINALFUNC name functions of the aggregate's keyspace.
  auto unqualified = [&](const std::string& name) {
    const size_t dot = name.find('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
  };
  a.state_function = unqualified(s.state_function);
  a.final_function = s.final_function.empty() ? "" : unqualified(s.final_function);
  std::vector<CqlType> state_arguments{a.state_type};
  state_arguments.insert(state_arguments.end(), a.argument_types.begin(), a.argument_types.end());
  const UserFunction* state = nullptr;
  const auto state_overloads = functions.FunctionOverloads(ks, a.state_function);
  for (const auto& f : state_overloads) {
    if (f.argument_types == state_arguments) state = &f;
  }
  if (!state) {
    return Status::InvalidArgument("State function " + FunctionSignature(ks, a.state_function, state_arguments) +
                                   " doesn't exist");
  }
  if (!(state->return_type == a.state_type)) {
    return Status::InvalidArgument("State function " + FunctionSignature(ks, a.state_function, state_arguments) +
                                   " return type must be the same as the first argument type - check STYPE, argument and "
                                   "return types");
  }
  a.return_type = a.state_type;
  if (!a.final_function.empty()) {
    const UserFunction* final = nullptr;
    const auto final_overloads = functions.FunctionOverloads(ks, a.final_function);
    for (const auto& f : final_overloads) {
      if (f.argument_types == std::vector<CqlType>{a.state_type}) final = &f;
    }
    if (!final) {
      return Status::InvalidArgument("Final function " + FunctionSignature(ks, a.final_function, {a.state_type}) +
                                     " doesn't exist");
    }
    a.return_type = final->return_type;
  }
  if (s.initial_condition) {
    auto v = LiteralToValue(*s.initial_condition, a.state_type, "INITCOND");
    if (!v.ok()) return Status::InvalidArgument("Invalid INITCOND for aggregate " + ks + "." + a.name + ": " + v.status().message());
    if (!v->is_null()) {
      std::string bytes;
      TESSERA_RETURN_IF_ERROR(Serialize(a.state_type, *v, &bytes));
      a.initial_condition_literal = ValueLiteral(a.state_type, bytes);
      a.initial_state = std::move(bytes);
    }
  }
  bool existed = false;
  for (const auto& other : functions.AggregateOverloads(ks, a.name)) existed |= other.argument_types == a.argument_types;
  Status st = db.CreateAggregate(a, s.or_replace);
  if (st.IsAlreadyExists() && s.if_not_exists) return SchemaOutcome{};
  TESSERA_RETURN_IF_ERROR(st);
  return SchemaOutcome{SchemaChange{existed ? "UPDATED" : "CREATED", "AGGREGATE", ks, a.name, TypeTexts(a.argument_types)}};
}

}  // namespace

Result<SchemaOutcome> ExecuteFunctionStatement(Database& db, const UserFunctions& functions, const FunctionStatement& s,
                                               const std::string& current_keyspace) {
  const std::string ks = KeyspaceOf(s.name, current_keyspace);
  if (ks.empty()) return NoKeyspace();
  if (!db.catalog().GetKeyspace(ks).ok()) return Status::InvalidArgument("Keyspace " + ks + " doesn't exist");
  if (!s.drop) return s.aggregate ? CreateAggregate(db, functions, s, ks) : CreateFunction(db, functions, s, ks);
  std::optional<std::vector<CqlType>> signature;
  // DROP FUNCTION f drops the one overload; DROP FUNCTION f() names the one without arguments.
  if (!s.argument_types.empty() || s.signature_given) {
    TESSERA_ASSIGN_OR_RETURN(signature, ParseTypes(db, ks, s.argument_types));
  }
  std::vector<CqlType> dropped_types;
  if (s.aggregate) {
    auto dropped = db.DropAggregate(ks, s.name.name, signature);
    if (!dropped.ok() && dropped.status().IsNotFound() && s.if_not_exists) return SchemaOutcome{};
    if (!dropped.ok()) return dropped.status().IsNotFound() ? Status::InvalidArgument(dropped.status().message()) : dropped.status();
    dropped_types = dropped->argument_types;
  } else {
    auto dropped = db.DropFunction(ks, s.name.name, signature);
    if (!dropped.ok() && dropped.status().IsNotFound() && s.if_not_exists) return SchemaOutcome{};
    if (!dropped.ok()) return dropped.status().IsNotFound() ? Status::InvalidArgument(dropped.status().message()) : dropped.status();
    dropped_types = dropped->argument_types;
  }
  return SchemaOutcome{SchemaChange{"DROPPED", s.aggregate ? "AGGREGATE" : "FUNCTION", ks, s.name.name, TypeTexts(dropped_types)}};
}

}  // namespace tessera::cql
