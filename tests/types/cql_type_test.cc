#include "types/cql_type.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(CqlTypeTest, ParsesScalarsAndAliases) {
  EXPECT_EQ(CqlType::Parse("int")->kind(), TypeKind::kInt);
  EXPECT_EQ(CqlType::Parse("VARCHAR")->kind(), TypeKind::kText);
  EXPECT_EQ(CqlType::Parse(" text ")->ToCql(), "text");
  EXPECT_EQ(CqlType::Parse("timeuuid")->kind(), TypeKind::kTimeuuid);
}

TEST(CqlTypeTest, ParsesCollectionsAndRoundTrips) {
  for (const char* text : {"list<int>", "frozen<list<int>>", "set<text>", "map<text, bigint>",
                           "frozen<map<int, frozen<list<text>>>>", "frozen<tuple<int, text, frozen<set<uuid>>>>",
                           "map<text, frozen<tuple<int, double>>>"}) {
    auto t = CqlType::Parse(text);
    ASSERT_TRUE(t.ok()) << text << ": " << t.status().ToString();
    EXPECT_EQ(t->ToCql(), text);
    EXPECT_EQ(*CqlType::Parse(t->ToCql()), *t);
  }
}

TEST(CqlTypeTest, RejectsBadTypesWithPosition) {
  auto bad = CqlType::Parse("list<intt>");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown type 'intt'"), std::string::npos);
  EXPECT_FALSE(CqlType::Parse("list<list<int>>").ok());  // nested non-frozen collection
  EXPECT_FALSE(CqlType::Parse("frozen<int>").ok());
  EXPECT_FALSE(CqlType::Parse("map<int>").ok());
  EXPECT_FALSE(CqlType::Parse("int extra").ok());
  EXPECT_FALSE(CqlType::Parse("").ok());
}

TEST(CqlTypeTest, FrozenFreezesEverythingNestedInIt) {
  auto t = CqlType::Parse("frozen<map<text, list<int>>>");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->ToCql(), "frozen<map<text, frozen<list<int>>>>");
  EXPECT_TRUE(t->IsKeyable());
  EXPECT_EQ(CqlType::Parse("tuple<int, list<text>>")->ToCql(), "frozen<tuple<int, frozen<list<text>>>>");
}

TEST(CqlTypeTest, NestingIsBounded) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "frozen<list<";
  deep += "int";
  for (int i = 0; i < 40; ++i) deep += ">>";
  auto t = CqlType::Parse(deep);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("nesting deeper than"), std::string::npos);
  EXPECT_TRUE(CqlType::Parse("frozen<list<frozen<list<frozen<map<int, frozen<set<text>>>>>>>>").ok());
}

TEST(CqlTypeTest, TuplesAreAlwaysFrozen) {
  auto t = CqlType::Parse("tuple<int, text>");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToCql(), "frozen<tuple<int, text>>");
  EXPECT_EQ(*CqlType::Parse("frozen<tuple<int, text>>"), *t);
}

TEST(CqlTypeTest, KeyabilityFollowsCassandra) {
  EXPECT_TRUE(CqlType::Parse("int")->IsKeyable());
  EXPECT_TRUE(CqlType::Parse("frozen<list<int>>")->IsKeyable());
  EXPECT_TRUE(CqlType::Parse("tuple<int, text>")->IsKeyable());
  EXPECT_FALSE(CqlType::Parse("list<int>")->IsKeyable());
  EXPECT_FALSE(CqlType::Parse("duration")->IsKeyable());
  EXPECT_FALSE(CqlType::Parse("counter")->IsKeyable());
  EXPECT_FALSE(CqlType::Parse("tuple<int, duration>")->IsKeyable());
  EXPECT_TRUE(CqlType::Parse("map<text, int>")->IsMultiCell());
  EXPECT_FALSE(CqlType::Parse("frozen<map<text, int>>")->IsMultiCell());
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(CqlTypeTest, VectorsParseAndNameTheirMarshalClass) {
  auto v = CqlType::Parse("VECTOR < float , 3 >");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->kind(), TypeKind::kVector);
  EXPECT_EQ(v->dimension(), 3u);
  EXPECT_EQ(v->ToCql(), "vector<float, 3>");
  EXPECT_FALSE(v->IsKeyable());
  EXPECT_FALSE(v->IsMultiCell());
  EXPECT_EQ(*FixedValueSize(*v), 12u);
  EXPECT_EQ(MarshalClassName(*v), "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType,3)");
  auto back = ParseMarshalClassName(MarshalClassName(*v));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, *v);
  EXPECT_EQ(CqlType::Parse("vector<list<int>, 2>")->ToCql(), "vector<frozen<list<int>>, 2>");
  EXPECT_EQ(MarshalClassName(*CqlType::Parse("vector<list<int>, 2>")),
            "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FrozenType("
            "org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type)),2)");
  EXPECT_NE(*CqlType::Parse("vector<float, 3>"), *CqlType::Parse("vector<float, 4>"));
  for (const char* bad : {"vector<float, 0>", "vector<float>", "vector<counter, 2>", "vector<float, 8193>",
                          "vector<float, -1>", "vector<float, 2", "vector<float, 99999999999999999999>"}) {
    EXPECT_FALSE(CqlType::Parse(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseMarshalClassName("org.apache.cassandra.db.marshal.VectorType(Foo,2)").ok());
}

}  // namespace
}  // namespace tessera
