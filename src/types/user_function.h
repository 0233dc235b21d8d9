// User-defined functions and aggregates (CQL CREATE FUNCTION / CREATE
// AGGREGATE; Cassandra's UDFunction and UDAggregate, ScyllaDB's Lua UDFs) as
// plain values: what the catalog persists and system_schema.functions and
// system_schema.aggregates list. Running them is the executor's
// (cql/functions/user_functions.h).
//
// A function is identified by keyspace, name and argument types (overloads
// differ in their argument types), as in Cassandra.
//
// Thread safety: plain value types.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "types/cql_type.h"

namespace tessera {

struct UserFunction {
  std::string keyspace, name;
  std::vector<std::string> argument_names;
  std::vector<CqlType> argument_types;  // same length as argument_names
  CqlType return_type = CqlType::Scalar(TypeKind::kInt);
  // CALLED ON NULL INPUT: true; RETURNS NULL ON NULL INPUT: false (a null
  // argument gives null without running the body).
  bool called_on_null_input = false;
  std::string language;  // lower case, "lua"
  std::string body;
};

struct UserAggregate {
  std::string keyspace, name;
  std::vector<CqlType> argument_types;
  std::string state_function;  // in `keyspace`, takes (state_type, argument_types...)
  CqlType state_type = CqlType::Scalar(TypeKind::kInt);
  std::string final_function;  // empty: none; else takes (state_type)
  // INITCOND: the state's serialized value (native protocol v4 §6) and its
  // CQL literal (system_schema.aggregates.initcond); nullopt: null.
  std::optional<std::string> initial_state;
  std::string initial_condition_literal;
  CqlType return_type = CqlType::Scalar(TypeKind::kInt);  // the final function's, else state_type
};

// Argument types as CQL text, one per type ("int", "tuple<int, bigint>"):
// what system_schema and the FUNCTION / AGGREGATE schema change list.
inline std::vector<std::string> TypeTexts(const std::vector<CqlType>& types) {
  std::vector<std::string> out;
  for (const auto& t : types) out.push_back(t.ToCql());
  return out;
}

// "int, text": argument types joined as Cassandra writes a signature.
inline std::string JoinedTypes(const std::vector<CqlType>& types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) out += (i ? ", " : "") + types[i].ToCql();
  return out;
}

// "ks.name(int, text)": how Cassandra names a function in messages.
inline std::string FunctionSignature(const std::string& keyspace, const std::string& name,
                                     const std::vector<CqlType>& argument_types) {
  return keyspace + "." + name + "(" + JoinedTypes(argument_types) + ")";
}

}  // namespace tessera
