#include "cql/executor/schema_statements.h"

#include <gtest/gtest.h>

#include "cql/executor/error_mapping.h"
#include "cql/parser/parser.h"
#include "tests/db/test_util.h"

namespace tessera::cql {
namespace {

// Runs one schema statement; returns the change or the CQL error code.
struct Run {
  std::optional<SchemaChange> change;
  std::optional<ErrorCode> error;
  std::string message;
};

Run Exec(Database& db, const std::string& cql, const std::string& keyspace = "") {
  Run out;
  auto parsed = ParseStatement(cql);
  if (!parsed.ok()) {
    out.error = ToErrorResponse(parsed.status()).code;
    out.message = parsed.status().message();
    return out;
  }
  Result<SchemaOutcome> r = Status::OK();
  auto& s = parsed->statement;
  if (auto* ck = std::get_if<CreateKeyspaceStatement>(&s)) r = ExecuteCreateKeyspace(db, *ck);
  else if (auto* ct = std::get_if<CreateTableStatement>(&s)) r = ExecuteCreateTable(db, *ct, keyspace);
  else if (auto* ak = std::get_if<AlterKeyspaceStatement>(&s)) r = ExecuteAlterKeyspace(db, *ak);
  else if (auto* at = std::get_if<AlterTableStatement>(&s)) r = ExecuteAlterTable(db, *at, keyspace);
  else if (auto* d = std::get_if<DropStatement>(&s)) r = ExecuteDrop(db, *d, keyspace);
  else if (auto* tr = std::get_if<TruncateStatement>(&s)) {
    Coordinator coordinator(&db);  // a single node's: TRUNCATE of this node's copy
    Status st = ExecuteTruncate(coordinator, *tr, keyspace);
    r = st.ok() ? Result<SchemaOutcome>(SchemaOutcome{}) : Result<SchemaOutcome>(st);
  }
  if (!r.ok()) {
    out.error = ToErrorResponse(r.status()).code;
    out.message = r.status().message();
  } else {
    out.change = r->change;
  }
  return out;
}

// The seeds' example tables, as a Cassandra user would write them.
TEST(SchemaStatementsTest, SeedTablesAreCreatedWithKeysOrderAndOptions) {
  testing::TestDatabase tdb("cql_schema_seeds");
  Database& db = tdb.db();
  auto ks = Exec(db, "CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  ASSERT_TRUE(ks.change) << ks.message;
  EXPECT_EQ(ks.change->target, "KEYSPACE");
  // Seed 002: logistics order events, newest first within an order.
  auto t = Exec(db,
                "CREATE TABLE order_events (order_id text, event_time timestamp, seq int, status text, "
                "location text, PRIMARY KEY (order_id, event_time, seq)) "
                "WITH CLUSTERING ORDER BY (event_time DESC, seq ASC) AND default_time_to_live = 2592000 "
                "AND comment = 'seed 002' AND compaction = {'class': 'TimeWindowCompactionStrategy'}",
                "demo");
  ASSERT_TRUE(t.change) << t.message;
  EXPECT_EQ(t.change->name, "order_events");
  auto schema = *db.GetTable("demo", "order_events");
  EXPECT_EQ(schema->distribution, Distribution::kHash);
  ASSERT_EQ(schema->Clustering().size(), 2u);
  EXPECT_EQ(schema->Clustering()[0]->order, SortOrder::kDesc);
  EXPECT_EQ(schema->options.default_time_to_live, 2592000);
  EXPECT_EQ(schema->options.extra.at("compaction"), "{'class': 'TimeWindowCompactionStrategy'}");
  // Seed 000: the access log on a range table, with a composite partition key.
  auto log = Exec(db,
                  "CREATE TABLE demo.access_log (host text, day date, ts timestamp, path text, "
                  "PRIMARY KEY ((host, day), ts)) WITH distribution = 'range'");
  ASSERT_TRUE(log.change) << log.message;
  auto access = *db.GetTable("demo", "access_log");
  EXPECT_EQ(access->distribution, Distribution::kRange);
  EXPECT_EQ(access->PartitionKey().size(), 2u);
  EXPECT_EQ(db.Tablets(*access).size(), 1u);
  auto hashed = Exec(db, "CREATE TABLE demo.metrics (metric text, host text, ts timestamp, value double, "
                         "PRIMARY KEY ((metric, host), ts)) WITH initial_tablets = 8");
  ASSERT_TRUE(hashed.change) << hashed.message;
  EXPECT_EQ(db.Tablets(**db.GetTable("demo", "metrics")).size(), 8u);
}

TEST(SchemaStatementsTest, CassandrasErrorsAndCodes) {
  testing::TestDatabase tdb("cql_schema_errors");
  Database& db = tdb.db();
  Exec(db, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  EXPECT_EQ(Exec(db, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").error,
            ErrorCode::kAlreadyExists);
  EXPECT_FALSE(Exec(db, "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").error);
  EXPECT_EQ(Exec(db, "CREATE KEYSPACE k2 WITH replication = {'class': 'Nope'}").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy'}").error, ErrorCode::kInvalid);
  auto no_ks = Exec(db, "CREATE TABLE t (k int PRIMARY KEY)");
  EXPECT_EQ(no_ks.error, ErrorCode::kInvalid);
  EXPECT_NE(no_ks.message.find("No keyspace has been specified"), std::string::npos);
  EXPECT_TRUE(Exec(db, "CREATE TABLE t (k int PRIMARY KEY, v text)", "ks").change);
  EXPECT_EQ(Exec(db, "CREATE TABLE t (k int PRIMARY KEY)", "ks").error, ErrorCode::kAlreadyExists);
  EXPECT_FALSE(Exec(db, "CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY)", "ks").error);
  EXPECT_EQ(Exec(db, "CREATE TABLE ks.x (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (k DESC)").error,
            ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE TABLE ks.x (k int PRIMARY KEY, l list<int>, PRIMARY KEY (k))").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE TABLE ks.x (k list<int> PRIMARY KEY)").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE TABLE ks.x (k int PRIMARY KEY, v intt)").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE TABLE ks.x (k int, v text, PRIMARY KEY (z))").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE TABLE nope.x (k int PRIMARY KEY)").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE TABLE ks.x (k int PRIMARY KEY) WITH initial_tablets = 3").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "CREATE TABL ks.x (k int PRIMARY KEY)").error, ErrorCode::kSyntaxError);
  EXPECT_EQ(Exec(db, "DROP TABLE ks.missing").error, ErrorCode::kInvalid);
  EXPECT_FALSE(Exec(db, "DROP TABLE IF EXISTS ks.missing").error);
}

TEST(SchemaStatementsTest, AlterDropAndTruncate) {
  testing::TestDatabase tdb("cql_schema_alter");
  Database& db = tdb.db();
  Exec(db, "CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}");
  ASSERT_TRUE(Exec(db, "CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))").change);
  auto add = Exec(db, "ALTER TABLE t ADD tags set<text>", "ks");
  ASSERT_TRUE(add.change) << add.message;
  EXPECT_EQ(add.change->change_type, "UPDATED");
  EXPECT_TRUE((*db.GetTable("ks", "t"))->FindColumn("tags"));
  EXPECT_EQ(Exec(db, "ALTER TABLE ks.t ADD v int").error, ErrorCode::kInvalid);
  EXPECT_EQ(Exec(db, "ALTER TABLE ks.t DROP c").error, ErrorCode::kInvalid);
  EXPECT_TRUE(Exec(db, "ALTER TABLE ks.t DROP v").change);
  EXPECT_FALSE((*db.GetTable("ks", "t"))->FindColumn("v"));
  EXPECT_TRUE(Exec(db, "ALTER TABLE ks.t WITH gc_grace_seconds = 60 AND comment = 'short'").change);
  EXPECT_EQ((*db.GetTable("ks", "t"))->options.gc_grace_seconds, 60);
  EXPECT_EQ(Exec(db, "ALTER TABLE ks.t WITH distribution = 'range'").error, ErrorCode::kInvalid);
  EXPECT_FALSE(Exec(db, "TRUNCATE ks.t").error);
  EXPECT_EQ(Exec(db, "TRUNCATE ks.nope").error, ErrorCode::kInvalid);
  auto alter = Exec(db, "ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}");
  ASSERT_TRUE(alter.change) << alter.message;
  EXPECT_EQ(db.catalog().GetKeyspace("ks")->replication.at("replication_factor"), "3");
  ASSERT_TRUE(Exec(db, "ALTER KEYSPACE ks WITH durable_writes = false").change);
  EXPECT_FALSE(db.catalog().GetKeyspace("ks")->durable_writes);
  EXPECT_EQ(db.catalog().GetKeyspace("ks")->replication.at("replication_factor"), "3");
  EXPECT_EQ(Exec(db, "ALTER KEYSPACE nope WITH durable_writes = true").error, ErrorCode::kInvalid);
  auto drop = Exec(db, "DROP KEYSPACE ks");
  ASSERT_TRUE(drop.change);
  EXPECT_EQ(drop.change->target, "KEYSPACE");
  EXPECT_EQ(Exec(db, "DROP KEYSPACE ks").error, ErrorCode::kInvalid);
  EXPECT_FALSE(Exec(db, "DROP KEYSPACE IF EXISTS ks").error);
}

}  // namespace
}  // namespace tessera::cql
