#include "cql/executor/literals.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/bytes.h"
#include "cql/parser/parser.h"
#include "types/decimal_digits.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

// The term of `INSERT INTO t (c) VALUES (<literal>)`.
Term TermOf(const std::string& literal) {
  auto r = ParseStatement("INSERT INTO t (c) VALUES (" + literal + ")");
  EXPECT_TRUE(r.ok()) << literal << ": " << r.status().ToString();
  return std::get<InsertStatement>(r->statement).values[0];
}

Result<Value> Convert(const std::string& literal, const char* type) {
  return LiteralToValue(TermOf(literal), *CqlType::Parse(type), "c");
}

int64_t Int(const std::string& literal, const char* type) {
  auto v = Convert(literal, type);
  EXPECT_TRUE(v.ok()) << literal << " as " << type << ": " << v.status().ToString();
  return v.ok() ? v->as_int() : -1;
}

TEST(LiteralsTest, IntegersAreRangeCheckedWithCassandrasMessage) {
  EXPECT_EQ(Int("127", "tinyint"), 127);
  EXPECT_EQ(Int("-32768", "smallint"), -32768);
  EXPECT_EQ(Int("-2147483648", "int"), INT32_MIN);
  EXPECT_EQ(Int("9223372036854775807", "bigint"), INT64_MAX);
  auto over = Convert("2147483648", "int");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "Invalid INTEGER constant (2147483648) for \"c\" of type int");
  auto wrong = Convert("'abc'", "int");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "Invalid STRING constant (abc) for \"c\" of type int");
  EXPECT_FALSE(Convert("1.5", "bigint").ok());
  std::string v;
  ASSERT_TRUE(Serialize(CqlType::Scalar(TypeKind::kVarint), *Convert("-123456789012345678901234567890", "varint"), &v).ok());
  bool negative;
  std::string digits;
  VarintToDecimalString(v, &negative, &digits);
  EXPECT_TRUE(negative);
  EXPECT_EQ(digits, "123456789012345678901234567890");
}

TEST(LiteralsTest, FloatsAndDecimals) {
  EXPECT_EQ(Convert("1.5", "double")->as_double(), 1.5);
  EXPECT_EQ(Convert("3", "float")->as_float(), 3.0f);
  EXPECT_TRUE(std::isnan(Convert("NaN", "double")->as_double()));
  EXPECT_EQ(Convert("-Infinity", "double")->as_double(), -INFINITY);
  Decimal d = Convert("1.50", "decimal")->as_decimal();
  EXPECT_EQ(d.scale, 2);
  EXPECT_EQ(ToHex(d.unscaled), "0096");  // 150
  Decimal e = Convert("-1.5e3", "decimal")->as_decimal();
  EXPECT_EQ(e.scale, -2);  // -15 x 10^2
  EXPECT_EQ(ToHex(e.unscaled), "f1");
}

TEST(LiteralsTest, TimestampsDatesTimesAndDurations) {
  // Cassandra's documented example: '2011-02-03 04:05+0000' = 1296705900000.
  EXPECT_EQ(Int("'2011-02-03 04:05+0000'", "timestamp"), 1296705900000);
  EXPECT_EQ(Int("'2011-02-03T04:05:00Z'", "timestamp"), 1296705900000);
  EXPECT_EQ(Int("'2011-02-03 06:05:00.000+02:00'", "timestamp"), 1296705900000);
  EXPECT_EQ(Int("'2011-02-03'", "timestamp"), 1296691200000);
  EXPECT_EQ(Int("'1969-12-31 23:59:59.999'", "timestamp"), -1);
  EXPECT_EQ(Int("1296705900000", "timestamp"), 1296705900000);
  EXPECT_FALSE(Convert("'2011-13-03'", "timestamp").ok());
  EXPECT_FALSE(Convert("'yesterday'", "timestamp").ok());
  EXPECT_EQ(Int("'1970-01-01'", "date"), int64_t{1} << 31);
  EXPECT_EQ(Int("'1970-01-02'", "date"), (int64_t{1} << 31) + 1);
  // Days past the end of their month are no dates (issue 12); leap days are.
  for (const char* bad : {"'2020-02-30'", "'2019-02-29'", "'1900-02-29'", "'2021-04-31'", "'2021-13-01'"}) {
    EXPECT_FALSE(Convert(bad, "date").ok()) << bad;
    EXPECT_FALSE(Convert(std::string(bad).insert(11, " 10:00:00"), "timestamp").ok()) << bad;
  }
  EXPECT_EQ(Int("'2020-02-29'", "date"), Int("'2020-03-01'", "date") - 1);
  EXPECT_EQ(Int("'2000-02-29'", "date"), Int("'2000-03-01'", "date") - 1);
  EXPECT_EQ(Int("'08:12:54.123456789'", "time"), ((8 * 60 + 12) * 60 + 54) * 1'000'000'000LL + 123456789);
  EXPECT_FALSE(Convert("'25:00:00'", "time").ok());
  Duration a = Convert("1h30m", "duration")->as_duration();
  EXPECT_EQ(a.nanoseconds, 5400LL * 1'000'000'000);
  Duration iso = Convert("P1Y2M3DT4H", "duration")->as_duration();
  EXPECT_EQ(iso.months, 14);
  EXPECT_EQ(iso.days, 3);
  EXPECT_EQ(iso.nanoseconds, 4LL * 3'600'000'000'000);
  EXPECT_EQ(Convert("P2W", "duration")->as_duration().days, 14);
  Duration neg = Convert("-2d10ms", "duration")->as_duration();
  EXPECT_EQ(neg.days, -2);
  EXPECT_EQ(neg.nanoseconds, -10'000'000);
}

TEST(LiteralsTest, UuidsInetsBlobsTextAndBooleans) {
  auto u = Convert("123e4567-e89b-12d3-a456-426614174000", "uuid");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(ToHex(u->as_bytes()), "123e4567e89b12d3a456426614174000");
  EXPECT_TRUE(Convert("123e4567-e89b-12d3-a456-426614174000", "timeuuid").ok());   // version 1
  EXPECT_FALSE(Convert("123e4567-e89b-42d3-a456-426614174000", "timeuuid").ok());  // version 4
  EXPECT_EQ(Convert("'192.168.0.1'", "inet")->as_bytes(), std::string("\xc0\xa8\x00\x01", 4));
  EXPECT_EQ(Convert("'::1'", "inet")->as_bytes().size(), 16u);
  EXPECT_FALSE(Convert("'300.1.1.1'", "inet").ok());
  EXPECT_EQ(Convert("0xCAFE", "blob")->as_bytes(), "\xca\xfe");
  EXPECT_FALSE(Convert("'caf\xc3\xa9'", "ascii").ok());
  EXPECT_EQ(Convert("'caf\xc3\xa9'", "text")->as_bytes(), "caf\xc3\xa9");
  EXPECT_TRUE(Convert("true", "boolean")->as_bool());
  EXPECT_TRUE(Convert("null", "int")->is_null());
}

TEST(LiteralsTest, CollectionsAndTuplesFollowTheirElementTypes) {
  auto m = Convert("{'a': [1, 2], 'b': []}", "map<text, frozen<list<int>>>");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->as_entries().size(), 2u);
  EXPECT_EQ(m->as_entries()[0].second.as_elements()[1].as_int(), 2);
  EXPECT_TRUE(Convert("{}", "map<text, int>").ok());
  EXPECT_TRUE(Convert("{}", "set<int>").ok());
  auto tuple = Convert("(1, 'x', null)", "tuple<int, text, double>");
  ASSERT_TRUE(tuple.ok());
  EXPECT_TRUE(tuple->as_elements()[2].is_null());
  EXPECT_FALSE(Convert("[1, null]", "list<int>").ok());
  EXPECT_FALSE(Convert("[1, 'a']", "list<int>").ok());
  EXPECT_FALSE(Convert("{1: 2}", "set<int>").ok());
  EXPECT_FALSE(Convert("(1, 2, 3)", "tuple<int, int>").ok());
  std::string bytes;  // what the storage layer will store
  EXPECT_TRUE(Serialize(*CqlType::Parse("map<text, frozen<list<int>>>"), *m, &bytes).ok());
}

}  // namespace
}  // namespace tessera::cql
