// UserFunctions: the user-defined functions and aggregates a statement
// names, found in the catalog (db/catalog.h) and run (lua_function.h), as
// Cassandra's UDFunction / UDAggregate and ScyllaDB's Lua UDFs.
//
// Off by default, as Cassandra's enable_user_defined_functions: false; then
// CREATE FUNCTION / AGGREGATE are refused by the executor and nothing here
// is consulted. Compiled bodies are cached by their full definition, so a
// CREATE OR REPLACE is seen by the next statement.
//
// Errors of a call are Status::FunctionFailure (CQL 0x1400, native
// protocol v4 §9) with Cassandra's message "execution of 'ks.f[int]'
// failed: ...".
//
// Thread safety: thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cql/functions/lua_function.h"
#include "db/catalog.h"

namespace tessera::cql {

// One aggregate ready to fold rows: its state and final functions compiled.
struct ResolvedAggregate {
  UserAggregate definition;
  std::shared_ptr<const LuaFunction> state_function;
  std::shared_ptr<const LuaFunction> final_function;  // null: none
};

class UserFunctions {
 public:
  // REQUIRES: catalog outlives this.
  UserFunctions(const Catalog* catalog, bool enabled, LuaLimits limits = {})
      : catalog_(catalog), enabled_(enabled), limits_(limits) {}

  bool enabled() const { return enabled_; }
  const LuaLimits& limits() const { return limits_; }

  // Whether a function or aggregate `name` ("f" in `keyspace`, or "ks.f") exists.
  bool Exists(const std::string& keyspace, const std::string& name) const;
  bool IsAggregate(const std::string& keyspace, const std::string& name) const;

  // The overloads of `name` ("f" in `keyspace`, or "ks.f"); empty if none.
  std::vector<UserFunction> FunctionOverloads(const std::string& keyspace, const std::string& name) const;
  std::vector<UserAggregate> AggregateOverloads(const std::string& keyspace, const std::string& name) const;

  // The compiled body of `f`. Errors: InvalidArgument (lua_function.h's).
  Result<std::shared_ptr<const LuaFunction>> Compiled(const UserFunction& f) const;
  // `a` with its state and final functions. Errors: InvalidArgument when
  // one no longer exists or does not compile.
  Result<std::shared_ptr<const ResolvedAggregate>> Resolve(const UserAggregate& a) const;

  // Calls `f`: null without running the body when an argument is null and
  // the function RETURNS NULL ON NULL INPUT. Errors: FunctionFailure.
  static Result<std::optional<std::string>> Execute(const LuaFunction& f,
                                                    const std::vector<std::optional<std::string>>& arguments);

 private:
  const Catalog* catalog_;
  const bool enabled_;
  const LuaLimits limits_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const LuaFunction>> compiled_;  // by definition; guarded by mu_
};

}  // namespace tessera::cql
