// Materialized views through the query processor (db/materialized_view.h,
// db/view_maintenance.cc): a model check of random base writes (inserts,
// updates that move view rows, cell, row, range and partition deletions,
// batches) against the view rows the base implies, with the views' tablets
// split and merged part way through; the pure parts (the view row of a base
// row, the definition's checks) on their own.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/bytes.h"
#include "cql/executor/query_processor.h"
#include "cql/protocol/response_decoding.h"
#include "db/materialized_view.h"
#include "tests/db/test_util.h"

namespace tessera::cql {
namespace {

class MaterializedViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tdb_ = std::make_unique<testing::TestDatabase>("cql_materialized_view");
    processor_ = std::make_unique<QueryProcessor>(&tdb_->coordinator(), NodeInfo{});
    Ok("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    Ok("CREATE TABLE ks.base (p int, c int, k text, v int, PRIMARY KEY (p, c))");
    Ok("CREATE MATERIALIZED VIEW ks.by_k AS SELECT * FROM ks.base WHERE k IS NOT NULL AND p IS NOT NULL "
       "AND c IS NOT NULL PRIMARY KEY (k, p, c) WITH initial_tablets = 1");
    Ok("CREATE MATERIALIZED VIEW ks.by_c AS SELECT p, c, v FROM ks.base WHERE p IS NOT NULL AND c IS NOT NULL "
       "PRIMARY KEY (c, p) WITH CLUSTERING ORDER BY (p DESC) AND initial_tablets = 1");
  }
  void TearDown() override { processor_.reset(); }

  DecodedResponse Run(const std::string& cql) {
    QueryRequest q;
    q.query = cql;
    q.params.consistency = Consistency::kOne;
    q.params.page_size = -1;
    Reply r = processor_->Process(conn_, Request{q}, {});
    auto decoded = DecodeResponse(static_cast<uint8_t>(r.opcode), 0, r.body);
    EXPECT_TRUE(decoded.ok()) << cql;
    return decoded.ok() ? *decoded : DecodedResponse{};
  }
  void Ok(const std::string& cql) {
    DecodedResponse r = Run(cql);
    ASSERT_FALSE(r.is_error()) << cql << ": " << r.error_message;
  }
  // Rows as text: ints as decimal, text as is, null as "null".
  std::set<std::vector<std::string>> Rows(const std::string& cql) {
    DecodedResponse r = Run(cql);
    EXPECT_FALSE(r.is_error()) << cql << ": " << r.error_message;
    std::set<std::vector<std::string>> out;
    for (const auto& row : r.rows.rows) {
      std::vector<std::string> values;
      for (size_t i = 0; i < row.size(); ++i) {
        if (!row[i]) {
          values.push_back("null");
        } else if (r.rows.columns[i].type.kind() == TypeKind::kInt) {
          values.push_back(std::to_string(static_cast<int32_t>(GetBigEndian32(row[i]->data()))));
        } else {
          values.push_back(*row[i]);
        }
      }
      out.insert(std::move(values));
    }
    return out;
  }
  void ExpectViewsMatchBase(const std::string& when) {
    std::set<std::vector<std::string>> want_k, want_c;
    for (const auto& r : Rows("SELECT p, c, k, v FROM ks.base")) {
      if (r[2] != "null") want_k.insert({r[2], r[0], r[1], r[3]});
      want_c.insert({r[1], r[0], r[3]});
    }
    EXPECT_EQ(Rows("SELECT k, p, c, v FROM ks.by_k"), want_k) << when;
    EXPECT_EQ(Rows("SELECT c, p, v FROM ks.by_c"), want_c) << when;
  }
  std::string RandomWrite(std::mt19937& rng) {
    const int p = static_cast<int>(rng() % 30), c = static_cast<int>(rng() % 6), v = static_cast<int>(rng() % 100);
    const std::string k = std::string("'k") + std::to_string(rng() % 5) + "'";
    const std::string at = " WHERE p = " + std::to_string(p) + " AND c = " + std::to_string(c);
    switch (rng() % 10) {
      case 0:
      case 1:
        return "INSERT INTO ks.base (p, c, k, v) VALUES (" + std::to_string(p) + ", " + std::to_string(c) + ", " + k +
               ", " + std::to_string(v) + ")";
      case 2: return "UPDATE ks.base SET k = " + k + at;
      case 3: return "UPDATE ks.base SET v = " + std::to_string(v) + at;
      case 4: return "DELETE k FROM ks.base" + at;
      case 5: return "DELETE FROM ks.base" + at;
      case 6: return "DELETE FROM ks.base WHERE p = " + std::to_string(p) + " AND c >= " + std::to_string(c);
      case 7: return "DELETE FROM ks.base WHERE p = " + std::to_string(p);
      case 8: return "UPDATE ks.base SET v = null, k = " + k + at;
      default:
        return "BEGIN BATCH UPDATE ks.base SET k = " + k + at + "; INSERT INTO ks.base (p, c, v) VALUES (" +
               std::to_string((p + 1) % 30) + ", " + std::to_string(c) + ", " + std::to_string(v) + "); APPLY BATCH";
    }
  }

  std::unique_ptr<testing::TestDatabase> tdb_;
  std::unique_ptr<QueryProcessor> processor_;
  ConnectionState conn_;
};

TEST_F(MaterializedViewTest, RandomWritesKeepEveryViewEqualToWhatTheBaseImplies) {
  std::mt19937 rng(31);
  for (int i = 0; i < 1500; ++i) {
    const std::string write = RandomWrite(rng);
    Ok(write);
    if (i % 250 == 249) ExpectViewsMatchBase("after write " + std::to_string(i) + ": " + write);
    if (i == 700) {  // the views' tablets split and merge like any table's
      Database& db = tdb_->db();
      for (const char* name : {"by_k", "by_c"}) {
        auto view = db.GetTable("ks", name);
        ASSERT_TRUE(view.ok());
        const auto tablets = db.Tablets(**view);
        ASSERT_FALSE(tablets.empty());
        auto split = db.SplitTablet(**view, tablets.front().id);
        ASSERT_TRUE(split.ok()) << split.status().ToString();
        auto merged = db.MergeTablets(**view, split->first);
        ASSERT_TRUE(merged.ok()) << merged.status().ToString();
        ASSERT_TRUE(db.SplitTablet(**view, *merged).ok());
      }
      ExpectViewsMatchBase("after the views' tablets split and merged");
    }
  }
  ExpectViewsMatchBase("at the end");
}

TEST_F(MaterializedViewTest, ViewsSurviveAReopenAndKeepFollowingTheBase) {
  Ok("INSERT INTO ks.base (p, c, k, v) VALUES (1, 1, 'a', 1)");
  processor_.reset();
  tdb_->Reopen();
  processor_ = std::make_unique<QueryProcessor>(&tdb_->coordinator(), NodeInfo{});
  Ok("UPDATE ks.base SET k = 'b' WHERE p = 1 AND c = 1");
  EXPECT_EQ(Rows("SELECT k, p, c FROM ks.by_k"), (std::set<std::vector<std::string>>{{"b", "1", "1"}}));
  ExpectViewsMatchBase("after a reopen");
}

TEST(ViewRowOf, CopiesKeysAndCellsAndBoundsCellsByTheKeyColumnsExpiry) {
  TableSchema base;
  base.keyspace = "ks";
  base.name = "t";
  base.columns = {{0, "p", CqlType::Scalar(TypeKind::kInt), ColumnKind::kPartitionKey, SortOrder::kAsc},
                  {1, "c", CqlType::Scalar(TypeKind::kInt), ColumnKind::kClustering, SortOrder::kAsc},
                  {2, "k", CqlType::Scalar(TypeKind::kText), ColumnKind::kRegular, SortOrder::kAsc},
                  {3, "v", CqlType::Scalar(TypeKind::kInt), ColumnKind::kRegular, SortOrder::kAsc}};
  TableSchema view;
  view.keyspace = "ks";
  view.name = "by_k";
  view.view = ViewDef{"t", "", true, ""};
  view.columns = {{0, "k", CqlType::Scalar(TypeKind::kText), ColumnKind::kPartitionKey, SortOrder::kAsc},
                  {1, "p", CqlType::Scalar(TypeKind::kInt), ColumnKind::kClustering, SortOrder::kAsc},
                  {2, "c", CqlType::Scalar(TypeKind::kInt), ColumnKind::kClustering, SortOrder::kAsc},
                  {3, "v", CqlType::Scalar(TypeKind::kInt), ColumnKind::kRegular, SortOrder::kAsc}};
  ASSERT_TRUE(ValidateViewDefinition(base, view).ok());
  RowResult row;
  row.clustering = {"C"};
  Cell k;
  k.column_id = 2;
  k.value = "key";
  k.flags = Cell::kExpiring;
  k.ttl = 10;
  k.local_deletion_time = 1000;
  Cell v;
  v.column_id = 3;
  v.value = "val";
  row.cells = {k, v};
  auto out = ViewRowOf(base, view, {"P"}, row, 900);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->partition_key, std::vector<std::string>{"key"});
  EXPECT_EQ(out->clustering, (std::vector<std::string>{"P", "C"}));
  EXPECT_EQ(out->expiry, 1000u);
  ASSERT_EQ(out->cells.size(), 1u);
  EXPECT_EQ(out->cells[0].column_id, 3u);
  EXPECT_EQ(out->cells[0].value, "val");
  EXPECT_EQ(out->cells[0].expiry, 1000u);  // bounded by its row's
  EXPECT_FALSE(ViewRowOf(base, view, {"P"}, row, 1000));  // the key column expired
  row.cells = {v};
  EXPECT_FALSE(ViewRowOf(base, view, {"P"}, row, 900));  // a null view key: no view row
  // Two regular base columns in the view's key, or a base key column missing, are refused.
  TableSchema two = view;
  two.columns[3].kind = ColumnKind::kClustering;
  EXPECT_EQ(ValidateViewDefinition(base, two).message(),
            "Cannot include more than one non-primary key column in materialized view primary key (got k, v)");
  TableSchema missing = view;
  missing.columns[2].kind = ColumnKind::kRegular;
  EXPECT_EQ(ValidateViewDefinition(base, missing).message(),
            "Cannot create materialized view 'by_k' without primary key columns c from base table 't'");
}

}  // namespace
}  // namespace tessera::cql
