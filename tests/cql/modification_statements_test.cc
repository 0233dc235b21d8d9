#include "cql/executor/modification_statements.h"

#include <gtest/gtest.h>

#include "cql/executor/schema_statements.h"
#include "cql/parser/parser.h"
#include "tests/db/test_util.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

class ModificationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tdb_ = std::make_unique<testing::TestDatabase>("cql_modification");
    Ddl("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    Ddl("CREATE TABLE ks.t (k int, c int, v text, n bigint, tags set<text>, attrs map<text, int>, "
        "events list<text>, owner text STATIC, PRIMARY KEY (k, c))");
  }
  void Ddl(const std::string& cql) {
    auto p = ParseStatement(cql);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    if (auto* ks = std::get_if<CreateKeyspaceStatement>(&p->statement)) {
      ASSERT_TRUE(ExecuteCreateKeyspace(db(), *ks).ok());
    }
    if (auto* t = std::get_if<CreateTableStatement>(&p->statement)) {
      ASSERT_TRUE(ExecuteCreateTable(db(), *t, "ks").ok());
    }
  }
  Database& db() { return tdb_->db(); }

  // Parses, builds and applies one write; returns its status.
  Status Write(const std::string& cql, std::vector<WireValue> values = {}) {
    auto p = ParseStatement(cql);
    if (!p.ok()) return p.status();
    WriteContext ctx;
    ctx.keyspace = "ks";
    ctx.bind.values = &values;
    ctx.bind.now_micros = tdb_->now_micros();
    ctx.bind.rng = &rng_;
    Result<std::vector<Mutation>> m = Status::OK();
    if (auto* i = std::get_if<InsertStatement>(&p->statement)) m = BuildInsert(db(), *i, ctx);
    else if (auto* u = std::get_if<UpdateStatement>(&p->statement)) m = BuildUpdate(tdb_->coordinator(), *u, ctx);
    else if (auto* d = std::get_if<DeleteStatement>(&p->statement)) m = BuildDelete(tdb_->coordinator(), *d, ctx);
    if (!m.ok()) return m.status();
    return tdb_->coordinator().ApplyBatch(*m);
  }

  std::optional<RowResult> Row(int k, int c) {
    auto t = *db().GetTable("ks", "t");
    auto r = db().ReadRow(t, {testing::Int(k)}, {testing::Int(c)});
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::nullopt;
  }
  std::string Text(const RowResult& row, const char* col) { return testing::CellText(**db().GetTable("ks", "t"), row, col); }
  std::vector<std::string> Paths(const RowResult& row, const char* col) {
    uint32_t id = (*db().GetTable("ks", "t"))->FindColumn(col)->id;
    std::vector<std::string> out;
    for (const auto& c : row.cells) {
      if (c.column_id == id) out.push_back(c.path.empty() ? c.value : c.path);
    }
    return out;
  }

  std::unique_ptr<testing::TestDatabase> tdb_;
  std::mt19937_64 rng_{7};
};

TEST_F(ModificationTest, InsertWithLiteralsMarkersTtlAndTimestamp) {
  ASSERT_TRUE(Write("INSERT INTO t (k, c, v, tags) VALUES (1, 2, 'hello', {'b', 'a'}) USING TTL 100 AND TIMESTAMP 1234").ok());
  auto row = Row(1, 2);
  ASSERT_TRUE(row);
  EXPECT_EQ(Text(*row, "v"), "hello");
  EXPECT_EQ(Paths(*row, "tags"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(row->cells[0].timestamp, 1234);
  EXPECT_EQ(row->cells[0].ttl, 100);
  std::string k, c;
  Serialize(CqlType::Scalar(TypeKind::kInt), Value::Int(3), &k);
  Serialize(CqlType::Scalar(TypeKind::kInt), Value::Int(4), &c);
  ASSERT_TRUE(Write("INSERT INTO t (k, c, v, n) VALUES (?, ?, ?, ?)",
                    {WireValue::Of(k), WireValue::Of(c), WireValue{WireValue::Kind::kUnset, ""}, WireValue{}}).ok());
  auto r2 = Row(3, 4);
  ASSERT_TRUE(r2);  // INSERT keeps the row alive with only its key
  EXPECT_EQ(Text(*r2, "v"), "<absent>");
  EXPECT_TRUE(Write("INSERT INTO t (k, c, owner) VALUES (1, 9, 'alice')").ok());
  auto slice = db().ReadSlice(*db().GetTable("ks", "t"), {testing::Int(1)}, SliceRequest{});
  ASSERT_TRUE(slice.ok() && slice->partition.static_row);
  EXPECT_EQ(Text(*slice->partition.static_row, "owner"), "alice");
}

TEST_F(ModificationTest, UpdateOfStaticColumnsAloneNeedsNoClusteringKey) {
  auto owner = [&](int k) {
    auto slice = db().ReadSlice(*db().GetTable("ks", "t"), {testing::Int(k)}, SliceRequest{});
    EXPECT_TRUE(slice.ok());
    return slice.ok() && slice->partition.static_row ? Text(*slice->partition.static_row, "owner") : "<none>";
  };
  ASSERT_TRUE(Write("UPDATE t SET owner = 'bob' WHERE k = 5").ok()) << "Cassandra allows it";
  EXPECT_EQ(owner(5), "bob");
  EXPECT_FALSE(Row(5, 0));  // no clustering row was written
  ASSERT_TRUE(Write("UPDATE t SET owner = 'carol' WHERE k IN (6, 7)").ok());
  EXPECT_EQ(owner(7), "carol");
  // A regular column, or part of the clustering key named, still needs the whole key.
  Status s = Write("UPDATE t SET owner = 'x', v = 'y' WHERE k = 5");
  EXPECT_TRUE(s.IsInvalidArgument() && s.message().find("Some clustering keys are missing: c") != std::string::npos)
      << s.ToString();
  for (const char* cql : {"UPDATE t SET owner = 'x' WHERE k = 5 AND c > 3", "UPDATE t SET owner = 'x' WHERE k = 5 AND c = 1"}) {
    s = Write(cql);
    EXPECT_TRUE(s.IsInvalidArgument() && s.message() == "Invalid restrictions on clustering columns since the UPDATE "
                                                        "statement modifies only static columns")
        << s.ToString();
  }
  EXPECT_EQ(owner(5), "bob");
  s = Write("DELETE owner FROM t WHERE k = 5 AND c = 1");
  EXPECT_TRUE(s.IsInvalidArgument() && s.message() == "Invalid restrictions on clustering columns since the DELETE "
                                                      "statement modifies only static columns")
      << s.ToString();
  ASSERT_TRUE(Write("DELETE owner FROM t WHERE k = 5").ok());
  EXPECT_EQ(owner(5), "<none>");
}

TEST_F(ModificationTest, UpdateCollectionOperationsAndInOnTheKey) {
  ASSERT_TRUE(Write("UPDATE t SET tags = {'x'}, attrs = {'a': 1}, events = ['e1'] WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("UPDATE t SET tags = tags + {'y'}, attrs['b'] = 2, events = events + ['e2', 'e3'] WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("UPDATE t SET tags = tags - {'x'}, attrs = attrs - {'a'} WHERE k = 1 AND c = 1").ok());
  auto row = Row(1, 1);
  ASSERT_TRUE(row);
  EXPECT_EQ(Paths(*row, "tags"), std::vector<std::string>{"y"});
  EXPECT_EQ(Paths(*row, "attrs"), std::vector<std::string>{"b"});
  EXPECT_EQ(Paths(*row, "events").size(), 3u);  // element ids (timeuuids), in insertion order
  ASSERT_TRUE(Write("UPDATE t SET v = 'multi' WHERE k IN (5, 6) AND c IN (1, 2)").ok());
  for (int k : {5, 6}) {
    for (int c : {1, 2}) EXPECT_TRUE(Row(k, c)) << k << "," << c;
  }
  ASSERT_TRUE(Write("UPDATE t SET v = null WHERE k = 5 AND c = 1").ok());
  EXPECT_FALSE(Row(5, 1));  // UPDATE writes no row marker: without cells the row is gone
}

TEST_F(ModificationTest, DeleteCellsRowsRangesAndPartitions) {
  for (int c = 0; c < 10; ++c) ASSERT_TRUE(Write("INSERT INTO t (k, c, v, attrs) VALUES (1, " + std::to_string(c) + ", 'v', {'a': 1, 'b': 2})").ok());
  ASSERT_TRUE(Write("DELETE v, attrs['a'] FROM t WHERE k = 1 AND c = 0").ok());
  auto row = Row(1, 0);
  ASSERT_TRUE(row);
  EXPECT_EQ(Text(*row, "v"), "<absent>");
  EXPECT_EQ(Paths(*row, "attrs"), std::vector<std::string>{"b"});
  ASSERT_TRUE(Write("DELETE FROM t WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("DELETE FROM t WHERE k = 1 AND c > 5 AND c <= 8").ok());
  auto t = *db().GetTable("ks", "t");
  auto slice = db().ReadSlice(t, {testing::Int(1)}, SliceRequest{});
  std::vector<int64_t> left;
  for (const auto& r : slice->partition.rows) left.push_back(testing::AsInt(r.clustering[0]));
  EXPECT_EQ(left, (std::vector<int64_t>{0, 2, 3, 4, 5, 9}));
  ASSERT_TRUE(Write("DELETE FROM t WHERE k = 1").ok());
  EXPECT_TRUE(db().ReadSlice(t, {testing::Int(1)}, SliceRequest{})->partition.rows.empty());
}

TEST_F(ModificationTest, ListOperationsKeepOrderAndReadTheCurrentList) {
  auto values = [&](int k, int c) {
    std::vector<std::string> out;
    auto row = Row(k, c);
    if (!row) return out;
    uint32_t id = (*db().GetTable("ks", "t"))->FindColumn("events")->id;
    for (const auto& cell : row->cells) {
      if (cell.column_id == id) out.push_back(cell.value);
    }
    return out;
  };
  using V = std::vector<std::string>;
  ASSERT_TRUE(Write("UPDATE t SET events = ['b', 'c'] WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("UPDATE t SET events = events + ['d'] WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("UPDATE t SET events = ['a0', 'a'] + events WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("UPDATE t SET events = ['first'] + events WHERE k = 1 AND c = 1").ok());
  EXPECT_EQ(values(1, 1), (V{"first", "a0", "a", "b", "c", "d"}));
  ASSERT_TRUE(Write("UPDATE t SET events[2] = 'A' WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("DELETE events[0] FROM t WHERE k = 1 AND c = 1").ok());
  ASSERT_TRUE(Write("UPDATE t SET events = events - ['c', 'nope'] WHERE k = 1 AND c = 1").ok());
  EXPECT_EQ(values(1, 1), (V{"a0", "A", "b", "d"}));
  EXPECT_EQ(Write("UPDATE t SET events[9] = 'x' WHERE k = 1 AND c = 1").message(), "List index 9 out of bound, list has size 4");
  EXPECT_EQ(Write("UPDATE t SET v[0] = 'x' WHERE k = 1 AND c = 1").message(),
            "Invalid operation (v[?] = ?) for non-frozen-collection column v");
}

// Issue 12's crash: an empty IN on a clustering column that is not the last
// one read element 0 of an empty list. It matches no row: nothing is deleted.
TEST_F(ModificationTest, AnEmptyInOnAClusteringColumnDeletesNothing) {
  Ddl("CREATE TABLE ks.wide (a int, b int, c int, v int, PRIMARY KEY ((a), b, c))");
  ASSERT_TRUE(Write("INSERT INTO ks.wide (a, b, c, v) VALUES (1, 2, 3, 4)").ok());
  ASSERT_TRUE(Write("INSERT INTO ks.t (k, c, v) VALUES (1, 1, 'x')").ok());
  EXPECT_TRUE(Write("DELETE FROM ks.wide WHERE a = 1 AND b IN ()").ok());
  EXPECT_TRUE(Write("DELETE v FROM ks.wide WHERE a = 1 AND b IN () AND c = 3").ok());
  // Columns over a clustering range are refused before the IN is looked at, as Cassandra refuses them.
  EXPECT_TRUE(Write("DELETE v FROM ks.wide WHERE a = 1 AND b IN ()").IsInvalidArgument());
  EXPECT_TRUE(Write("DELETE FROM ks.wide WHERE a = 1 AND b IN () AND c = 3").ok());
  EXPECT_TRUE(Write("DELETE FROM ks.wide WHERE a IN () AND b = 2").ok());
  EXPECT_TRUE(Write("DELETE FROM ks.t WHERE k = 1 AND c IN ()").ok());
  const WireValue empty_list = WireValue::Of(std::string("\0\0\0\0", 4));  // a list of no elements (v4 §6)
  EXPECT_TRUE(Write("DELETE FROM ks.wide WHERE a = 1 AND b IN ?", {empty_list}).ok());
  EXPECT_TRUE(Write("UPDATE ks.wide SET v = 5 WHERE a = 1 AND b IN () AND c = 3").ok());
  auto wide = *db().GetTable("ks", "wide");
  auto r = db().ReadRow(wide, {testing::Int(1)}, {testing::Int(2), testing::Int(3)});
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ(testing::CellText(*wide, **r, "v"), testing::Int(4));
  EXPECT_TRUE(Row(1, 1).has_value());
}

TEST_F(ModificationTest, CassandrasErrors) {
  auto msg = [&](const std::string& cql) { return Write(cql).message(); };
  EXPECT_EQ(msg("INSERT INTO t (c, v) VALUES (1, 'x')"), "Some partition key parts are missing: k");
  EXPECT_EQ(msg("INSERT INTO t (k, v) VALUES (1, 'x')"), "Some clustering keys are missing: c");
  EXPECT_EQ(msg("INSERT INTO t (k, c, v) VALUES (1, 2)"), "Unmatched column names/values");
  EXPECT_EQ(msg("INSERT INTO t (k, c, nope) VALUES (1, 2, 3)"), "Undefined column name nope");
  EXPECT_EQ(msg("INSERT INTO t (k, c, v) VALUES (1, 2, 3)"), "Invalid INTEGER constant (3) for \"v\" of type text");
  EXPECT_EQ(msg("INSERT INTO nope (k) VALUES (1)"), "unconfigured table nope");
  EXPECT_EQ(msg("UPDATE t SET v = 'x' WHERE k = 1"), "Some clustering keys are missing: c");
  EXPECT_EQ(msg("UPDATE t SET v = 'x' WHERE k = 1 AND c = 1 AND v = 'y'"), "Non PRIMARY KEY columns found in where clause: v");
  EXPECT_EQ(msg("UPDATE t SET k = 2 WHERE k = 1 AND c = 1"), "PRIMARY KEY part k found in SET part");
  EXPECT_EQ(msg("INSERT INTO t (k, c) VALUES (1, 2) USING TTL -1"), "A TTL must be greater or equal to 0, but was -1");
  EXPECT_NE(msg("INSERT INTO t (k, c, v) VALUES (?, 2, 'x')").find("markers"), std::string::npos);
  EXPECT_EQ(msg("DELETE FROM t WHERE c = 1"), "Some partition key parts are missing: k");
  // The builders build a conditional statement's write; conditional_writes.h
  // checks the condition before applying it (tests/drivers/test_lwt.py).
  EXPECT_TRUE(Write("INSERT INTO t (k, c) VALUES (1, 2) IF NOT EXISTS").ok());
}

}  // namespace
}  // namespace tessera::cql
