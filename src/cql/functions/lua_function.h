// LuaFunction: the body of one user-defined function (CREATE FUNCTION ...
// LANGUAGE lua, as ScyllaDB offers) compiled for Lua 5.4 (Debian
// liblua5.4) and run in a sandbox.
//
// The body is a Lua chunk that sees the arguments as locals of their CQL
// names and returns the result: AS 'return a + b'.
//
// Sandbox: only the base library without dofile, loadfile, load, require,
// collectgarbage and print, and the string, table, math and utf8
// libraries; no io, os, debug or package. Text chunks only (no bytecode).
// Each call has a time limit, checked every 1,000 Lua instructions (a single
// C library call such as a pattern match is not interrupted), and each
// interpreter a memory limit on what it holds allocated; over either, the
// call fails and its interpreter is dropped.
//
// Types (arguments and result): boolean; tinyint, smallint, int, bigint,
// counter, varint (within 64 bits), timestamp (ms since the epoch) as Lua
// integers; float, double as numbers; text, ascii, blob as strings; uuid,
// timeuuid as their text form; list, set and tuple as sequences, map as a
// table; null as nil. Integer results are range-checked; a number with an
// integral value is taken where an integer is expected.
//
// Thread safety: Call is thread-safe; interpreters are pooled, one per
// concurrent call.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "types/user_function.h"

struct lua_State;

namespace tessera::cql {

struct LuaLimits {
  int64_t timeout_micros = 1'000'000;  // per call (Cassandra's user_defined_function_fail_timeout is 1,500 ms)
  size_t memory_bytes = 16u << 20;     // per interpreter
};

// Whether Lua functions take and return `type` (see above).
bool LuaSupportsType(const CqlType& type);

class LuaFunction {
 public:
  // Errors: InvalidArgument: an argument or return type Lua functions do not
  // take (LuaSupportsType), or the body does not compile (Lua's message).
  static Result<std::shared_ptr<const LuaFunction>> Compile(const UserFunction& function, LuaLimits limits = {});
  ~LuaFunction();
  LuaFunction(const LuaFunction&) = delete;
  LuaFunction& operator=(const LuaFunction&) = delete;

  // Runs the body on `arguments` (serialized values of the argument types,
  // nullopt for null; one per argument). Returns the result serialized in
  // the return type, nullopt for nil. Does not apply RETURNS NULL ON NULL
  // INPUT (the caller does). Errors: InvalidArgument saying what failed: the
  // body raised an error, ran past the time limit or out of memory, or
  // returned a value that is not of the return type.
  Result<std::optional<std::string>> Call(const std::vector<std::optional<std::string>>& arguments) const;

  const UserFunction& definition() const { return function_; }

  // One sandboxed interpreter with the body loaded (lua_function.cc).
  struct Interpreter;
  struct InterpreterDeleter {
    void operator()(Interpreter* in) const;
  };
  using InterpreterPtr = std::unique_ptr<Interpreter, InterpreterDeleter>;

 private:
  LuaFunction(UserFunction function, LuaLimits limits);
  // A fresh sandboxed interpreter with the body loaded. Errors: the compile error.
  Result<InterpreterPtr> NewInterpreter() const;

  UserFunction function_;
  LuaLimits limits_;
  mutable std::mutex mu_;
  mutable std::vector<InterpreterPtr> idle_;  // guarded by mu_
};

}  // namespace tessera::cql
