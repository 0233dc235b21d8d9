// Lua 5.4's C API raises errors with longjmp, so everything that can raise
// (allocation: pushing strings, creating tables; the hook's time-out) runs
// inside lua_pcall in PushAndRun, whose frame holds no object with a
// destructor; reading the result back uses only calls that cannot raise.
#include "cql/functions/lua_function.h"

#include <lua.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/steady_micros.h"
#include "common/uuid.h"
#include "types/serialization.h"
#include "types/value_compare.h"

namespace tessera::cql {

struct LuaFunction::Interpreter {
  lua_State* state = nullptr;
  size_t used = 0;
  size_t limit = 0;
  int64_t deadline_micros = 0;
  bool timed_out = false;
  int body_ref = LUA_NOREF;
  ~Interpreter() {
    if (state != nullptr) lua_close(state);
  }
};

namespace {

using Interpreter = LuaFunction::Interpreter;

// lua_Alloc that keeps the interpreter's bytes under its limit; a refused
// allocation is Lua's "not enough memory" error.
void* LimitedAlloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* in = static_cast<Interpreter*>(ud);
  const size_t old = ptr != nullptr ? osize : 0;
  if (nsize == 0) {
    in->used -= old;
    std::free(ptr);
    return nullptr;
  }
  if (nsize > old && in->used + (nsize - old) > in->limit) return nullptr;
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  in->used = in->used - old + nsize;
  return p;
}

void TimeLimitHook(lua_State* L, lua_Debug*) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  auto* in = static_cast<Interpreter*>(ud);
  if (SteadyMicros() > in->deadline_micros) {
    in->timed_out = true;
    luaL_error(L, "ran longer than its time limit");
  }
}

bool IsIntegerKind(TypeKind k) {
  return k == TypeKind::kTinyint || k == TypeKind::kSmallint || k == TypeKind::kInt || k == TypeKind::kBigint ||
         k == TypeKind::kCounter || k == TypeKind::kTimestamp || k == TypeKind::kVarint;
}

// Values as Lua sees them: uuids as text, varints as int64 (see Adapt).
void PushValue(lua_State* L, const CqlType& type, const Value& v) {
  luaL_checkstack(L, 3, "nested too deep");
  if (v.is_null()) {
    lua_pushnil(L);
    return;
  }
  const TypeKind k = type.kind();
  if (const bool* b = std::get_if<bool>(&v.storage())) {
    lua_pushboolean(L, *b ? 1 : 0);
  } else if (const int64_t* i = std::get_if<int64_t>(&v.storage())) {
    lua_pushinteger(L, static_cast<lua_Integer>(*i));
  } else if (const float* f = std::get_if<float>(&v.storage())) {
    lua_pushnumber(L, static_cast<lua_Number>(*f));
  } else if (const double* d = std::get_if<double>(&v.storage())) {
    lua_pushnumber(L, static_cast<lua_Number>(*d));
  } else if (const std::string* s = std::get_if<std::string>(&v.storage())) {
    lua_pushlstring(L, s->data(), s->size());
  } else if (const Elements* e = std::get_if<Elements>(&v.storage())) {
    lua_createtable(L, static_cast<int>(e->items.size()), 0);
    for (size_t i = 0; i < e->items.size(); ++i) {
      const CqlType& element = k == TypeKind::kTuple ? type.params()[i] : type.params()[0];
      PushValue(L, element, e->items[i]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
  } else if (const Entries* m = std::get_if<Entries>(&v.storage())) {
    lua_createtable(L, 0, static_cast<int>(m->items.size()));
    for (const auto& entry : m->items) {
      PushValue(L, type.params()[0], entry.first);
      PushValue(L, type.params()[1], entry.second);
      lua_rawset(L, -3);
    }
  } else {
    lua_pushnil(L);  // not reached: LuaSupportsType refuses the rest
  }
}

struct CallFrame {
  const std::vector<CqlType>* types;
  const std::vector<Value>* values;
  int body_ref;
};

int PushAndRun(lua_State* L) {
  const auto* frame = static_cast<const CallFrame*>(lua_touserdata(L, 1));
  luaL_checkstack(L, static_cast<int>(frame->values->size()) + 2, "too many arguments");
  lua_rawgeti(L, LUA_REGISTRYINDEX, frame->body_ref);
  for (size_t i = 0; i < frame->values->size(); ++i) PushValue(L, (*frame->types)[i], (*frame->values)[i]);
  lua_call(L, static_cast<int>(frame->values->size()), 1);
  return 1;
}

// The value Lua sees for a CQL value (uuids as text, varints as integers).
Result<Value> Adapt(const CqlType& type, Value v) {
  if (v.is_null()) return v;
  switch (type.kind()) {
    case TypeKind::kUuid:
    case TypeKind::kTimeuuid:
      return Value::Bytes(UuidText(v.as_bytes()));
    case TypeKind::kVarint: {
      const std::string& b = v.as_bytes();
      if (b.size() > 8) return Status::InvalidArgument("a varint argument does not fit in a Lua integer");
      int64_t x = b.empty() || (static_cast<unsigned char>(b[0]) & 0x80) == 0 ? 0 : -1;
      for (unsigned char c : b) x = static_cast<int64_t>((static_cast<uint64_t>(x) << 8) | c);
      return Value::Int(x);
    }
    case TypeKind::kList:
    case TypeKind::kSet:
    case TypeKind::kTuple: {
      std::vector<Value> items;
      for (size_t i = 0; i < v.as_elements().size(); ++i) {
        const CqlType& element = type.kind() == TypeKind::kTuple ? type.params()[i] : type.params()[0];
        TESSERA_ASSIGN_OR_RETURN(Value x, Adapt(element, v.as_elements()[i]));
        items.push_back(std::move(x));
      }
      return Value::List(std::move(items));
    }
    case TypeKind::kMap: {
      std::vector<std::pair<Value, Value>> items;
      for (const auto& [key, value] : v.as_entries()) {
        TESSERA_ASSIGN_OR_RETURN(Value k, Adapt(type.params()[0], key));
        TESSERA_ASSIGN_OR_RETURN(Value x, Adapt(type.params()[1], value));
        items.emplace_back(std::move(k), std::move(x));
      }
      return Value::Map(std::move(items));
    }
    default:
      return v;
  }
}

std::string LuaTypeName(lua_State* L, int index) { return lua_typename(L, lua_type(L, index)); }

// Reads the Lua value at `index` as a value of `type`. Only calls that cannot
// raise a Lua error: the value is read, never converted in place.
Result<Value> ReadValue(lua_State* L, int index, const CqlType& type) {
  index = lua_absindex(L, index);
  const int lt = lua_type(L, index);
  if (lt == LUA_TNIL) return Value();
  const TypeKind k = type.kind();
  auto wrong = [&]() {
    return Status::InvalidArgument("returned a Lua " + LuaTypeName(L, index) + " where a " + type.ToCql() + " is expected");
  };
  if (k == TypeKind::kBoolean) {
    if (lt != LUA_TBOOLEAN) return wrong();
    return Value::Boolean(lua_toboolean(L, index) != 0);
  }
  if (IsIntegerKind(k)) {
    if (lt != LUA_TNUMBER) return wrong();
    int64_t x = 0;
    if (lua_isinteger(L, index)) {
      x = static_cast<int64_t>(lua_tointeger(L, index));
    } else {
      const double d = lua_tonumber(L, index);
      if (!(d == std::floor(d)) || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18) {
        return Status::InvalidArgument("returned " + std::to_string(d) + ", which is not a " + type.ToCql());
      }
      x = static_cast<int64_t>(d);
    }
    int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    if (k == TypeKind::kTinyint) lo = -128, hi = 127;
    if (k == TypeKind::kSmallint) lo = -32768, hi = 32767;
    if (k == TypeKind::kInt) lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
    if (x < lo || x > hi) return Status::InvalidArgument("returned " + std::to_string(x) + ", out of range for " + type.ToCql());
    if (k == TypeKind::kVarint) {
      std::string b;
      for (int i = 7; i >= 0; --i) b += static_cast<char>((static_cast<uint64_t>(x) >> (8 * i)) & 0xff);
      // Minimal two's complement: drop leading bytes that only repeat the sign.
      size_t skip = 0;
      while (skip + 1 < b.size() && ((b[skip] == 0 && (b[skip + 1] & 0x80) == 0) ||
                                     (static_cast<unsigned char>(b[skip]) == 0xff && (b[skip + 1] & 0x80) != 0))) {
        ++skip;
      }
      return Value::Bytes(b.substr(skip));
    }
    return Value::Int(x);
  }
  if (k == TypeKind::kFloat || k == TypeKind::kDouble) {
    if (lt != LUA_TNUMBER) return wrong();
    const double d = lua_tonumber(L, index);
    return k == TypeKind::kFloat ? Value::Float(static_cast<float>(d)) : Value::Double(d);
  }
  if (k == TypeKind::kText || k == TypeKind::kAscii || k == TypeKind::kBlob || k == TypeKind::kUuid ||
      k == TypeKind::kTimeuuid) {
    if (lt != LUA_TSTRING) return wrong();
    size_t n = 0;
    const char* s = lua_tolstring(L, index, &n);
    std::string bytes(s, n);
    if (k == TypeKind::kUuid || k == TypeKind::kTimeuuid) {
      auto uuid = UuidFromText(bytes);
      if (!uuid.ok()) return Status::InvalidArgument("returned '" + bytes + "', which is not a uuid");
      return Value::Bytes(*uuid);
    }
    return Value::Bytes(std::move(bytes));
  }
  if (lt != LUA_TTABLE) return wrong();
  if (!lua_checkstack(L, 4)) return Status::InvalidArgument("returned a value nested too deep");
  if (k == TypeKind::kList || k == TypeKind::kSet || k == TypeKind::kTuple) {
    const size_t n = k == TypeKind::kTuple ? type.params().size() : static_cast<size_t>(lua_rawlen(L, index));
    std::vector<Value> items;
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, index, static_cast<lua_Integer>(i));
      const CqlType& element = k == TypeKind::kTuple ? type.params()[i - 1] : type.params()[0];
      auto x = ReadValue(L, -1, element);
      lua_pop(L, 1);
      if (!x.ok()) return x.status();
      if (x->is_null() && k != TypeKind::kTuple) return Status::InvalidArgument("returned a " + type.ToCql() + " holding nil");
      items.push_back(std::move(*x));
    }
    if (k == TypeKind::kSet) {
      const CqlType& element = type.params()[0];
      std::sort(items.begin(), items.end(), [&](const Value& a, const Value& b) { return CompareValues(element, a, b) < 0; });
      items.erase(std::unique(items.begin(), items.end(),
                              [&](const Value& a, const Value& b) { return CompareValues(element, a, b) == 0; }),
                  items.end());
    }
    return Value::List(std::move(items));
  }
  if (k == TypeKind::kMap) {
    std::vector<std::pair<Value, Value>> items;
    lua_pushnil(L);
    while (lua_next(L, index) != 0) {
      auto key = ReadValue(L, -2, type.params()[0]);
      auto value = key.ok() ? ReadValue(L, -1, type.params()[1]) : Result<Value>(Value());
      lua_pop(L, 1);
      if (!key.ok() || !value.ok()) {
        lua_pop(L, 1);
        return !key.ok() ? key.status() : value.status();
      }
      items.emplace_back(std::move(*key), std::move(*value));
    }
    const CqlType& key_type = type.params()[0];
    std::sort(items.begin(), items.end(),
              [&](const auto& a, const auto& b) { return CompareValues(key_type, a.first, b.first) < 0; });
    return Value::Map(std::move(items));
  }
  return wrong();
}

}  // namespace

bool LuaSupportsType(const CqlType& type) {
  switch (type.kind()) {
    case TypeKind::kBoolean: case TypeKind::kTinyint: case TypeKind::kSmallint: case TypeKind::kInt:
    case TypeKind::kBigint: case TypeKind::kCounter: case TypeKind::kVarint: case TypeKind::kTimestamp:
    case TypeKind::kFloat: case TypeKind::kDouble: case TypeKind::kText: case TypeKind::kAscii:
    case TypeKind::kBlob: case TypeKind::kUuid: case TypeKind::kTimeuuid:
      return true;
    case TypeKind::kList: case TypeKind::kSet: case TypeKind::kMap: case TypeKind::kTuple:
      return std::all_of(type.params().begin(), type.params().end(), LuaSupportsType);
    default:
      return false;
  }
}

Result<std::shared_ptr<const LuaFunction>> LuaFunction::Compile(const UserFunction& function, LuaLimits limits) {
  for (size_t i = 0; i < function.argument_types.size(); ++i) {
    if (!LuaSupportsType(function.argument_types[i])) {
      return Status::InvalidArgument("Lua functions do not take arguments of type " + function.argument_types[i].ToCql() +
                                     " (argument " + function.argument_names[i] + ")");
    }
  }
  if (!LuaSupportsType(function.return_type)) {
    return Status::InvalidArgument("Lua functions do not return type " + function.return_type.ToCql());
  }
  std::shared_ptr<LuaFunction> f(new LuaFunction(function, limits));
  TESSERA_ASSIGN_OR_RETURN(auto first, f->NewInterpreter());
  f->idle_.push_back(std::move(first));
  return std::shared_ptr<const LuaFunction>(std::move(f));
}

LuaFunction::LuaFunction(UserFunction function, LuaLimits limits) : function_(std::move(function)), limits_(limits) {}

LuaFunction::~LuaFunction() = default;

void LuaFunction::InterpreterDeleter::operator()(Interpreter* in) const { delete in; }

Result<LuaFunction::InterpreterPtr> LuaFunction::NewInterpreter() const {
  InterpreterPtr in(new Interpreter());
  in->limit = limits_.memory_bytes;
  in->state = lua_newstate(LimitedAlloc, in.get());
  if (in->state == nullptr) return Status::InvalidArgument("cannot create a Lua interpreter within the memory limit");
  lua_State* L = in->state;
  static const luaL_Reg kLibraries[] = {{LUA_GNAME, luaopen_base}, {LUA_TABLIBNAME, luaopen_table},
                                        {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
                                        {LUA_UTF8LIBNAME, luaopen_utf8}};
  for (const luaL_Reg& lib : kLibraries) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  for (const char* unsafe : {"dofile", "loadfile", "load", "require", "collectgarbage", "print"}) {
    lua_pushnil(L);
    lua_setglobal(L, unsafe);
  }
  // The arguments are the chunk's varargs, named on the body's first line
  // so that Lua's line numbers match the body's.
  std::string chunk;
  if (!function_.argument_names.empty()) {
    chunk = "local ";
    for (size_t i = 0; i < function_.argument_names.size(); ++i) chunk += (i ? ", " : "") + function_.argument_names[i];
    chunk += " = ...; ";
  }
  chunk += function_.body;
  const std::string name = "=" + function_.keyspace + "." + function_.name;
  if (luaL_loadbufferx(L, chunk.data(), chunk.size(), name.c_str(), "t") != LUA_OK) {
    std::string message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "the body does not compile";
    return Status::InvalidArgument("Could not compile function '" + function_.keyspace + "." + function_.name +
                                   "' from Lua source: " + message);
  }
  in->body_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_sethook(L, TimeLimitHook, LUA_MASKCOUNT, 1000);
  return in;
}

Result<std::optional<std::string>> LuaFunction::Call(const std::vector<std::optional<std::string>>& arguments) const {
  std::vector<Value> values;
  values.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size() && i < function_.argument_types.size(); ++i) {
    if (!arguments[i]) {
      values.emplace_back();
      continue;
    }
    auto v = Deserialize(function_.argument_types[i], *arguments[i]);
    if (!v.ok()) return v.status();
    TESSERA_ASSIGN_OR_RETURN(Value adapted, Adapt(function_.argument_types[i], std::move(*v)));
    values.push_back(std::move(adapted));
  }
  InterpreterPtr in;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      in = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!in) {
    TESSERA_ASSIGN_OR_RETURN(in, NewInterpreter());
  }
  lua_State* L = in->state;
  in->timed_out = false;
  in->deadline_micros = SteadyMicros() + limits_.timeout_micros;
  CallFrame frame{&function_.argument_types, &values, in->body_ref};
  lua_pushcfunction(L, PushAndRun);
  lua_pushlightuserdata(L, &frame);
  const int rc = lua_pcall(L, 1, 1, 0);
  if (rc != LUA_OK) {
    // The interpreter is dropped: after a time-out or a memory error its
    // state is not worth trusting.
    if (in->timed_out) {
      return Status::InvalidArgument("ran longer than " + std::to_string(limits_.timeout_micros / 1000) + " ms");
    }
    if (rc == LUA_ERRMEM) {
      return Status::InvalidArgument("used more than " + std::to_string(limits_.memory_bytes) + " bytes of memory");
    }
    return Status::InvalidArgument(lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "raised an error");
  }
  auto result = ReadValue(L, -1, function_.return_type);
  lua_settop(L, 0);
  if (!result.ok()) return result.status();
  std::optional<std::string> out;
  if (!result->is_null()) {
    std::string bytes;
    if (Status s = Serialize(function_.return_type, *result, &bytes); !s.ok()) {
      return Status::InvalidArgument("returned a value that is not a valid " + function_.return_type.ToCql() + ": " +
                                     s.message());
    }
    out = std::move(bytes);
  }
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(in));
  return out;
}

}  // namespace tessera::cql
