// LuaFunction (cql/functions/lua_function.h): values in and out of Lua, the
// sandbox and its limits, compile errors.
#include "cql/functions/lua_function.h"

#include <gtest/gtest.h>

#include "types/serialization.h"

namespace tessera::cql {
namespace {

UserFunction Fn(std::vector<std::pair<std::string, std::string>> arguments, const std::string& returns,
                const std::string& body) {
  UserFunction f;
  f.keyspace = "ks";
  f.name = "f";
  f.language = "lua";
  f.body = body;
  for (auto& [name, type] : arguments) {
    f.argument_names.push_back(name);
    f.argument_types.push_back(*CqlType::Parse(type));
  }
  f.return_type = *CqlType::Parse(returns);
  return f;
}

std::string Bytes(const std::string& type, const Value& v) {
  std::string out;
  EXPECT_TRUE(Serialize(*CqlType::Parse(type), v, &out).ok());
  return out;
}

Value Decode(const std::string& type, const std::optional<std::string>& bytes) {
  if (!bytes) return Value();
  return *Deserialize(*CqlType::Parse(type), *bytes);
}

TEST(LuaFunctionTest, IntegersTextAndCollectionsGoInAndComeBack) {
  auto add = LuaFunction::Compile(Fn({{"a", "int"}, {"b", "bigint"}}, "bigint", "return a + b"));
  ASSERT_TRUE(add.ok()) << add.status().ToString();
  auto r = (*add)->Call({Bytes("int", Value::Int(40)), Bytes("bigint", Value::Int(2))});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Decode("bigint", *r).as_int(), 42);

  auto upper = LuaFunction::Compile(Fn({{"s", "text"}}, "text", "return string.upper(s) .. '!'"));
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(Decode("text", *(*upper)->Call({Bytes("text", Value::Bytes("abc"))})).as_bytes(), "ABC!");

  // A list in, a sorted set without duplicates out; a map built in Lua.
  auto set = LuaFunction::Compile(Fn({{"l", "list<int>"}}, "set<int>", "local out = {} for i, v in ipairs(l) do out[i] = v * 2 end return out"));
  ASSERT_TRUE(set.ok());
  auto s = Decode("set<int>", *(*set)->Call({Bytes("list<int>", Value::List({Value::Int(3), Value::Int(1), Value::Int(3)}))}));
  ASSERT_EQ(s.as_elements().size(), 2u);
  EXPECT_EQ(s.as_elements()[0].as_int(), 2);
  EXPECT_EQ(s.as_elements()[1].as_int(), 6);
  auto map = LuaFunction::Compile(Fn({{"n", "int"}}, "map<text, int>", "local m = {} for i = 1, n do m['k' .. i] = i end return m"));
  ASSERT_TRUE(map.ok());
  auto m = Decode("map<text, int>", *(*map)->Call({Bytes("int", Value::Int(3))}));
  ASSERT_EQ(m.as_entries().size(), 3u);
  EXPECT_EQ(m.as_entries()[0].first.as_bytes(), "k1");
  EXPECT_EQ(m.as_entries()[2].second.as_int(), 3);

  // A tuple state, as an aggregate's; nil is null.
  auto tuple = LuaFunction::Compile(Fn({{"t", "tuple<int, bigint>"}, {"v", "int"}}, "tuple<int, bigint>",
                                       "return {t[1] + 1, t[2] + v}"));
  ASSERT_TRUE(tuple.ok());
  auto t = Decode("tuple<int, bigint>", *(*tuple)->Call({Bytes("tuple<int, bigint>", Value::List({Value::Int(1), Value::Int(10)})),
                                                        Bytes("int", Value::Int(5))}));
  EXPECT_EQ(t.as_elements()[0].as_int(), 2);
  EXPECT_EQ(t.as_elements()[1].as_int(), 15);
  auto nil = LuaFunction::Compile(Fn({{"a", "int"}}, "int", "if a == nil then return nil end return a"));
  ASSERT_TRUE(nil.ok());
  EXPECT_FALSE((*nil)->Call({std::nullopt})->has_value());
}

TEST(LuaFunctionTest, ResultsOfTheWrongTypeOrRangeFail) {
  auto big = LuaFunction::Compile(Fn({}, "int", "return 2^40"));
  ASSERT_TRUE(big.ok());
  auto r = (*big)->Call({});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("out of range for int"), std::string::npos) << r.status().message();
  auto text = LuaFunction::Compile(Fn({}, "int", "return 'seven'"));
  ASSERT_TRUE(text.ok());
  r = (*text)->Call({});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("returned a Lua string where a int is expected"), std::string::npos)
      << r.status().message();
  auto fraction = LuaFunction::Compile(Fn({}, "bigint", "return 1.5"));
  ASSERT_TRUE(fraction.ok());
  EXPECT_FALSE((*fraction)->Call({}).ok());
  auto raised = LuaFunction::Compile(Fn({}, "int", "error('no such thing')"));
  ASSERT_TRUE(raised.ok());
  r = (*raised)->Call({});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no such thing"), std::string::npos) << r.status().message();
}

TEST(LuaFunctionTest, TheSandboxHasNoOsIoOrLoad) {
  for (const char* body : {"return os.time()", "return io.write('x')", "return load('return 1')()",
                           "return require('os')", "dofile('/etc/passwd') return 1"}) {
    auto f = LuaFunction::Compile(Fn({}, "int", body));
    ASSERT_TRUE(f.ok()) << body;
    auto r = (*f)->Call({});
    EXPECT_FALSE(r.ok()) << body;
  }
}

TEST(LuaFunctionTest, TimeAndMemoryLimitsStopACallAndTheNextOneRuns) {
  LuaLimits limits;
  limits.timeout_micros = 100'000;
  limits.memory_bytes = 4u << 20;
  auto loop = LuaFunction::Compile(Fn({{"a", "int"}}, "int", "if a > 0 then while true do end end return a"), limits);
  ASSERT_TRUE(loop.ok());
  auto r = (*loop)->Call({Bytes("int", Value::Int(1))});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ran longer than 100 ms"), std::string::npos) << r.status().message();
  r = (*loop)->Call({Bytes("int", Value::Int(0))});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Decode("int", *r).as_int(), 0);

  auto hog = LuaFunction::Compile(Fn({}, "int", "local t = {} for i = 1, 100000000 do t[i] = i end return #t"), limits);
  ASSERT_TRUE(hog.ok());
  r = (*hog)->Call({});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("used more than"), std::string::npos) << r.status().message();
  auto strings = LuaFunction::Compile(Fn({}, "int", "return #string.rep('x', 100000000)"), limits);
  ASSERT_TRUE(strings.ok());
  EXPECT_FALSE((*strings)->Call({}).ok());
}

TEST(LuaFunctionTest, CompileErrorsAndUnsupportedTypesAreRefused) {
  auto bad = LuaFunction::Compile(Fn({{"a", "int"}}, "int", "return a +"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Could not compile function 'ks.f' from Lua source"), std::string::npos)
      << bad.status().message();
  auto decimal = LuaFunction::Compile(Fn({{"a", "decimal"}}, "int", "return 1"));
  ASSERT_FALSE(decimal.ok());
  EXPECT_NE(decimal.status().message().find("type decimal"), std::string::npos) << decimal.status().message();
  // Bytecode is refused: only text chunks load.
  auto bytecode = LuaFunction::Compile(Fn({}, "int", std::string("\x1bLua", 4)));
  EXPECT_FALSE(bytecode.ok());
}

}  // namespace
}  // namespace tessera::cql
