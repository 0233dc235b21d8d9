// The design lint (db/schema_lint.h) on the seeds' designs, written as CQL:
// their bad designs are flagged with the rule and a DDL fix, their
// recommended designs pass silently.
#include "db/schema_lint.h"

#include <gtest/gtest.h>

#include "cql/executor/schema_statements.h"
#include "cql/parser/parser.h"

namespace tessera::cql {
namespace {

std::vector<KeyAdvice> Lint(const std::string& create) {
  auto parsed = ParseStatement(create);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  auto table = BuildTableSchema(std::get<CreateTableStatement>(parsed->statement), "lint");
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return LintTableDesign(*table, Guardrails{});
}

std::vector<std::string> Rules(const std::vector<KeyAdvice>& found) {
  std::vector<std::string> out;
  for (const auto& a : found) {
    EXPECT_EQ(a.kind, "schema");
    out.push_back(a.subject);
  }
  return out;
}

TEST(SchemaLintTest, SpannersUserAccessLogWithTheTimestampFirst) {
  auto found = Lint("CREATE TABLE user_access_log (last_access timestamp, user_id text, action text, "
                    "PRIMARY KEY (last_access, user_id)) WITH distribution = 'range'");
  ASSERT_EQ(Rules(found), std::vector<std::string>{"monotonic_leading_key: last_access"});
  EXPECT_NE(found[0].advice.find("PRIMARY KEY ((bucket, last_access), user_id)"), std::string::npos) << found[0].advice;
  EXPECT_NE(LintWarning(found[0]).find("Design lint (monotonic_leading_key: last_access)"), std::string::npos);
  // A sequence-like integer id leads just as badly; on a hash table either key is spread.
  EXPECT_EQ(Rules(Lint("CREATE TABLE orders (order_id bigint PRIMARY KEY, item text) WITH distribution = 'range'")),
            std::vector<std::string>{"monotonic_leading_key: order_id"});
  EXPECT_TRUE(Lint("CREATE TABLE orders (order_id bigint PRIMARY KEY, item text)").empty());
}

TEST(SchemaLintTest, SpannersRecommendedDesignsAreSilent) {
  // Key order swapped (Spanner's primary key is the whole key: here all of it partitions).
  EXPECT_TRUE(Lint("CREATE TABLE user_access_log (user_id text, last_access timestamp, action text, "
                   "PRIMARY KEY ((user_id, last_access))) WITH distribution = 'range'").empty());
  // A shard id (hash prefix) in front of the timestamp.
  EXPECT_TRUE(Lint("CREATE TABLE user_access_log (shard_id int, last_access timestamp, user_id text, "
                   "PRIMARY KEY ((shard_id, last_access, user_id))) WITH distribution = 'range'").empty());
  // A UUID key.
  EXPECT_TRUE(Lint("CREATE TABLE user_access_log (id uuid PRIMARY KEY, last_access timestamp, user_id text) "
                   "WITH distribution = 'range'").empty());
}

TEST(SchemaLintTest, AStatusCodePartitionKey) {
  auto found = Lint("CREATE TABLE requests_by_status (status int, host text, path text, PRIMARY KEY (status, host, path))");
  ASSERT_EQ(Rules(found), std::vector<std::string>{"low_cardinality_partition_key: status"});
  EXPECT_NE(found[0].advice.find("PRIMARY KEY ((status, bucket), host, path)"), std::string::npos) << found[0].advice;
  EXPECT_EQ(Rules(Lint("CREATE TABLE t (active boolean, id uuid, PRIMARY KEY (active, id))")),
            std::vector<std::string>{"low_cardinality_partition_key: active"});
  EXPECT_EQ(Rules(Lint("CREATE TABLE t (day date, id uuid, PRIMARY KEY (day, id))")),
            std::vector<std::string>{"low_cardinality_partition_key: day"});
  // The fix: a high-cardinality column with it.
  EXPECT_TRUE(Lint("CREATE TABLE requests_by_status (status int, host text, path text, "
                   "PRIMARY KEY ((status, host), path))").empty());
}

TEST(SchemaLintTest, ASensorSeriesWithoutATimeBucket) {
  auto found = Lint("CREATE TABLE sensor_readings (sensor_id uuid, ts timestamp, value double, "
                    "PRIMARY KEY (sensor_id, ts))");
  ASSERT_EQ(Rules(found), std::vector<std::string>{"unbounded_time_series: ts"});
  // N_c = 3, N_pk = 2, N_s = 0: one value a row, so 100,000 rows (the guardrail, and 100,000
  // values) is reached after 27 hours at one row a second: a day per bucket.
  EXPECT_NE(found[0].evidence.find("N_r (3 - 2 - 0) + 0"), std::string::npos) << found[0].evidence;
  EXPECT_NE(found[0].evidence.find("reaches 100000 rows"), std::string::npos) << found[0].evidence;
  EXPECT_NE(found[0].advice.find("PRIMARY KEY ((sensor_id, day), ts)"), std::string::npos) << found[0].advice;
  // Five values a row: 20,000 rows, under a day at one a second: an hour per bucket.
  auto wide = Lint("CREATE TABLE sensor_readings (sensor_id uuid, ts timestamp, a double, b double, c double, "
                   "d double, e double, PRIMARY KEY (sensor_id, ts))");
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_NE(wide[0].advice.find("(sensor_id, hour)"), std::string::npos) << wide[0].advice;
  // The recommended designs: a date bucket in the partition key.
  EXPECT_TRUE(Lint("CREATE TABLE sensor_readings (sensor_id uuid, day date, ts timestamp, value double, "
                   "PRIMARY KEY ((sensor_id, day), ts))").empty());
  EXPECT_TRUE(Lint("CREATE TABLE sensor_readings (sensor_id uuid, month text, ts timestamp, value double, "
                   "PRIMARY KEY ((sensor_id, month), ts))").empty());
}

}  // namespace
}  // namespace tessera::cql
