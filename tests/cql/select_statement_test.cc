#include "cql/executor/select_statement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <future>

#include "cql/executor/index_statements.h"
#include "cql/executor/modification_statements.h"
#include "cql/executor/schema_statements.h"
#include "cql/parser/parser.h"
#include "tests/db/test_util.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

class SelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tdb_ = std::make_unique<testing::TestDatabase>("cql_select");
    Run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    Run("CREATE TABLE ks.events (k int, c int, v text, n int, owner text STATIC, PRIMARY KEY (k, c))");
    for (int k = 0; k < 5; ++k) {
      Run("INSERT INTO events (k, owner) VALUES (" + std::to_string(k) + ", 'o" + std::to_string(k) + "')");
      for (int c = 0; c < 10; ++c) {
        Run("INSERT INTO events (k, c, v, n) VALUES (" + std::to_string(k) + ", " + std::to_string(c) + ", 'v" +
            std::to_string(c) + "', " + std::to_string(k * 100 + c) + ")");
      }
    }
  }

  // Runs a statement; SELECTs return their rows (all pages) as "col=value" strings.
  std::vector<std::string> Run(const std::string& cql, int32_t page_size = 0, int* pages = nullptr) {
    auto p = ParseStatement(cql);
    EXPECT_TRUE(p.ok()) << cql << ": " << p.status().ToString();
    if (!p.ok()) return {};
    BindContext bind;
    bind.values = &values_;
    bind.now_micros = tdb_->now_micros();
    bind.rng = &rng_;
    Database& db = tdb_->db();
    if (auto* ks = std::get_if<CreateKeyspaceStatement>(&p->statement)) {
      EXPECT_TRUE(ExecuteCreateKeyspace(db, *ks).ok());
    }
    if (auto* t = std::get_if<CreateTableStatement>(&p->statement)) {
      EXPECT_TRUE(ExecuteCreateTable(db, *t, "ks").ok());
    }
    if (auto* ci = std::get_if<CreateIndexStatement>(&p->statement)) {
      EXPECT_TRUE(ExecuteCreateIndex(tdb_->coordinator(), *ci, "ks", /*build=*/false).ok());
    }
    if (auto* i = std::get_if<InsertStatement>(&p->statement)) {
      WriteContext w{bind, "ks", std::nullopt};
      auto m = BuildInsert(db, *i, w);
      EXPECT_TRUE(m.ok()) << m.status().ToString();
      if (m.ok()) {
        EXPECT_TRUE(tdb_->coordinator().ApplyBatch(*m).ok());
      }
    }
    std::vector<std::string> out;
    if (auto* s = std::get_if<SelectStatement>(&p->statement)) {
      SelectContext ctx{bind, "ks", page_size, std::nullopt};
      int n = 0;
      for (int guard = 0; guard < 1000; ++guard) {
        auto r = defer_ ? ExecuteDeferred(db, *s, ctx) : ExecuteSelect(tdb_->coordinator(), nullptr, *s, ctx);
        if (!r.ok()) {
          error_ = r.status().message();
          return {"ERROR: " + error_};
        }
        ++n;
        if (page_size > 0 && !whole_partition_pages_) {
          EXPECT_LE(r->rows.size(), static_cast<size_t>(page_size));
        }
        for (const auto& row : r->rows) out.push_back(Format(r->columns, row));
        if (!r->paging_state) break;
        ctx.paging_state = r->paging_state;
      }
      if (pages) *pages = n;
    }
    return out;
  }

  static std::string Format(const std::vector<ColumnSpec>& cols, const std::vector<std::optional<std::string>>& row) {
    std::string s;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (!s.empty()) s += " ";
      s += cols[i].name + "=";
      if (!row[i]) {
        s += "null";
        continue;
      }
      auto v = Deserialize(cols[i].type, *row[i]);
      if (!v.ok()) s += "?";
      else if (cols[i].type.kind() == TypeKind::kText) s += v->as_bytes();
      else s += std::to_string(v->as_int());
    }
    return s;
  }

  // What the query processor of a cluster node does (DeferredRead): a first
  // run that stops at its reads, the reads done here (the slice through
  // ReadSliceAsync as there: it brings the static row on every page; rows
  // through ReadRow, which ReadRowAsync answers the same), a second run over
  // them; a page read in steps (a filtered scan) goes on as the processor's
  // RunDeferredSelect does: each step's first run defers its read.
  Result<ResultSet> ExecuteDeferred(Database& db, const SelectStatement& s, SelectContext ctx) {
    DeferredRead deferred;
    ctx.deferred = &deferred;
    if (!s.group_by.empty()) return ExecuteReplayed(db, s, ctx);
    ctx.defer_read = true;
    const int32_t page_size = ctx.page_size;
    auto first = ExecuteSelect(tdb_->coordinator(), nullptr, s, ctx);
    if (deferred.replay) return ReplayFromTheReads(db, s, ctx);  // a read it could not defer
    if (!deferred.table) {
      if (!deferred.static_skipped) return first;
      ctx.deferred = nullptr;
      ctx.defer_read = false;
      return ExecuteSelect(tdb_->coordinator(), nullptr, s, ctx);
    }
    std::optional<ResultSet> page;
    for (;;) {
      ReadDeferred(db, &deferred);
      ctx.defer_read = false;
      auto rs = ExecuteSelect(tdb_->coordinator(), nullptr, s, ctx);
      for (;;) {
        if (!rs.ok() || (!page && !deferred.paused)) return rs;
        if (deferred.paused) ++paused_steps_;
        if (!FoldSelectStep(std::move(*rs), page_size, &ctx, &page)) return std::move(*page);
        rs = ExecuteSelect(tdb_->coordinator(), nullptr, s, ctx);
        if (deferred.replay) rs = ReplayFromTheReads(db, s, ctx);  // the rest of the page, replayed
        else if (deferred.table) break;  // read it, then the step's second run
        if (deferred.static_skipped) {
          SelectContext plain = ctx;
          plain.deferred = nullptr;
          plain.defer_read = false;
          rs = ExecuteSelect(tdb_->coordinator(), nullptr, s, plain);
        }
      }
    }
  }

  // GROUP BY, as the processor of a cluster node runs it (DeferredRead::
  // replay): again after reading what each run found unanswered, through
  // the asynchronous reads.
  Result<ResultSet> ExecuteReplayed(Database& db, const SelectStatement& s, SelectContext ctx) {
    ctx.deferred->replay = true;
    ++replayed_runs_;
    auto first = ExecuteSelect(tdb_->coordinator(), nullptr, s, ctx);
    if (!ctx.deferred->table) return first;  // it read nothing
    return ReplayFromTheReads(db, s, ctx);
  }

  // After a replayed run: reads what it found unanswered and runs the
  // statement again, until a run reads nothing new.
  Result<ResultSet> ReplayFromTheReads(Database& db, const SelectStatement& s, SelectContext ctx) {
    DeferredRead& deferred = *ctx.deferred;
    ctx.defer_read = false;
    for (;;) {
      for (ReplayedRead& read : deferred.replayed) {
        if (read.answered()) continue;
        ++replayed_reads_;
        switch (read.kind) {
          case ReplayedRead::Kind::kRow: {
            std::promise<Result<std::optional<RowResult>>> row;
            db.ReadRowAsync(read.table, read.partition_key, read.clustering, kLocalConsistency,
                            [&row](Result<std::optional<RowResult>> r) { row.set_value(std::move(r)); });
            read.row = row.get_future().get();
            break;
          }
          case ReplayedRead::Kind::kSlice: {
            std::promise<Result<SliceResult>> slice;
            db.ReadSliceAsync(read.table, read.partition_key, read.slice, kLocalConsistency,
                              [&slice](Result<SliceResult> r) { slice.set_value(std::move(r)); });
            read.slice_result = slice.get_future().get();
            break;
          }
          case ReplayedRead::Kind::kRange: {
            std::promise<Result<RangeResult>> page;
            db.ScanRangeAsync(read.table, read.range, kLocalConsistency,
                              [&page](Result<RangeResult> r) { page.set_value(std::move(r)); });
            read.range_result = page.get_future().get();
            break;
          }
          case ReplayedRead::Kind::kPaxos:  // a SERIAL read's prepare: a cluster's only
            ADD_FAILURE() << "a single node replayed a Paxos prepare";
            read.paxos_result = Status::OK();
            break;
        }
      }
      deferred.table = nullptr;
      ++replayed_runs_;
      auto rs = ExecuteSelect(tdb_->coordinator(), nullptr, s, ctx);
      if (!deferred.table) return rs;
    }
  }

  void ReadDeferred(Database& db, DeferredRead* deferred) {
    for (auto& slice : deferred->slices) {
      ++deferred_slices_;
      std::promise<Result<SliceResult>> read;
      db.ReadSliceAsync(deferred->table, slice.partition_key, slice.request, kLocalConsistency,
                        [&read](Result<SliceResult> r) { read.set_value(std::move(r)); });
      slice.result = read.get_future().get();
    }
    if (deferred->range) {
      ++deferred_ranges_;
      std::promise<Result<RangeResult>> read;
      db.ScanRangeAsync(deferred->table, *deferred->range, kLocalConsistency,
                        [&read](Result<RangeResult> r) { read.set_value(std::move(r)); });
      deferred->range_result = read.get_future().get();
    }
    if (deferred->index_scan) {
      ++deferred_index_scans_;
      std::promise<Result<IndexScanResult>> read;
      const DeferredIndexScan& scan = *deferred->index_scan;
      RunIndexScanAsync(tdb_->coordinator(), deferred->table, scan.choice, scan.limits, scan.state, tdb_->now_micros(),
                        kLocalConsistency, [&read](Result<IndexScanResult> r) { read.set_value(std::move(r)); });
      deferred->index_scan->result = read.get_future().get();
    }
    for (auto& row : deferred->rows) row.result = db.ReadRow(deferred->table, row.partition_key, row.clustering);
    deferred_rows_ += deferred->rows.size();
  }

  bool defer_ = false;
  // Pages of a scan through an index on a static column hold whole partitions (index_scan.h).
  bool whole_partition_pages_ = false;
  size_t deferred_rows_ = 0, deferred_slices_ = 0, deferred_ranges_ = 0, paused_steps_ = 0, deferred_index_scans_ = 0,
         replayed_runs_ = 0, replayed_reads_ = 0;
  std::unique_ptr<testing::TestDatabase> tdb_;
  std::vector<WireValue> values_;
  std::mt19937_64 rng_{3};
  std::string error_;
};

using V = std::vector<std::string>;

// Issue 28 item 1: a SELECT run in two (its reads deferred, then taken
// from the slot) returns what one run does, page by page, for IN over
// partitions and clustering keys, LIMIT, PER PARTITION LIMIT, filtering,
// slices and static rows; whole rows and one-partition slices are deferred.
TEST_F(SelectTest, DeferredReadsReturnWhatOneRunReturns) {
  Run("CREATE TABLE ks.plain (k int, c int, v int, PRIMARY KEY (k, c))");
  Run("CREATE TABLE ks.kv (k int PRIMARY KEY, v int)");
  for (int k = 0; k < 12; ++k) {
    Run("INSERT INTO kv (k, v) VALUES (" + std::to_string(k) + ", " + std::to_string(7 * k) + ")");
    for (int c = 0; c < 6; ++c) {
      Run("INSERT INTO plain (k, c, v) VALUES (" + std::to_string(k) + ", " + std::to_string(c) + ", " +
          std::to_string(k * 10 + c) + ")");
    }
  }
  Run("INSERT INTO events (k, owner) VALUES (7, 'o7')");  // a partition with only a static row
  const std::vector<std::string> statements = {
      "SELECT * FROM kv WHERE k = 3",
      "SELECT * FROM kv WHERE k = 30",
      "SELECT k, v FROM kv WHERE k IN (1, 5, 3, 40, 5)",
      "SELECT k, v FROM kv WHERE k IN (1, 5, 3, 11, 0, 2) LIMIT 4",
      "SELECT k, v FROM kv WHERE k IN (1, 5, 3, 11) AND v > 10 ALLOW FILTERING",
      "SELECT * FROM plain WHERE k IN (2, 4, 9) AND c IN (5, 0, 3)",
      "SELECT * FROM plain WHERE k IN (2, 4, 9) AND c IN (5, 0, 3) ORDER BY c DESC",
      "SELECT * FROM plain WHERE k IN (2, 4, 9) AND c IN (5, 0, 3) PER PARTITION LIMIT 2",
      "SELECT * FROM plain WHERE k IN (2, 4, 9) AND c IN (5, 0, 3) LIMIT 5",
      "SELECT * FROM plain WHERE k = 4 AND c = 2",
      "SELECT * FROM plain WHERE k = 4 AND c >= 2",
      "SELECT * FROM plain WHERE k = 4 ORDER BY c DESC LIMIT 4",
      "SELECT * FROM plain WHERE k IN (3, 4) AND c >= 2",
      "SELECT * FROM events WHERE k = 2 AND c > 6",
      "SELECT * FROM events WHERE k IN (1, 2) AND c = 3",
      "SELECT COUNT(*) FROM plain WHERE k IN (1, 2, 3, 4) AND c IN (1, 2)",
      "SELECT * FROM plain WHERE k IN (3, 4, 7, 1)",
      "SELECT * FROM plain WHERE k IN (3, 4, 7, 1) LIMIT 9",
      "SELECT * FROM plain WHERE k IN (3, 40, 7) AND c > 1 AND c <= 4 ORDER BY c DESC",
      "SELECT * FROM plain WHERE k IN (3, 4, 7, 1) PER PARTITION LIMIT 4 LIMIT 11",
      "SELECT * FROM events WHERE k IN (4, 0, 3) AND c >= 8",
      "SELECT * FROM events WHERE k IN (4, 0, 3) LIMIT 13",
      "SELECT k, owner FROM events WHERE k IN (1, 2, 9) AND c > 20",
      "SELECT * FROM plain",
      "SELECT * FROM plain LIMIT 17",
      "SELECT * FROM plain PER PARTITION LIMIT 2",
      "SELECT * FROM plain WHERE token(k) > 0",
      "SELECT * FROM plain WHERE token(k) <= 0 LIMIT 10",
      "SELECT k, v FROM kv",
      "SELECT COUNT(*) FROM plain",
      "SELECT * FROM plain WHERE v > 50 ALLOW FILTERING",
      "SELECT * FROM events",
      // Filtered scans, read in steps where a read leaves the page short.
      "SELECT * FROM plain WHERE c = 3 ALLOW FILTERING",
      "SELECT * FROM plain WHERE c = 3 LIMIT 4 ALLOW FILTERING",
      "SELECT * FROM plain WHERE v > 30 AND c < 2 PER PARTITION LIMIT 1 ALLOW FILTERING",
      "SELECT k, v FROM kv WHERE v > 20 ALLOW FILTERING",
      "SELECT * FROM plain WHERE token(k) > 0 AND c IN (1, 4) ALLOW FILTERING",
      "SELECT JSON k, c FROM plain WHERE c = 5 ALLOW FILTERING",
      "SELECT COUNT(*) FROM plain WHERE c = 3 ALLOW FILTERING",
      "SELECT * FROM plain WHERE v = 1234 ALLOW FILTERING",
      // Filtered slices of partitions, read in steps too.
      "SELECT * FROM plain WHERE k = 4 AND v IN (41, 43, 45) ALLOW FILTERING",
      "SELECT * FROM plain WHERE k IN (2, 4, 9) AND c >= 1 AND v > 22 ALLOW FILTERING",
      "SELECT * FROM plain WHERE k IN (9, 2, 4) AND v < 45 ORDER BY c DESC ALLOW FILTERING",
      "SELECT * FROM plain WHERE k IN (2, 3, 4, 5) AND v > 31 PER PARTITION LIMIT 1 ALLOW FILTERING",
      "SELECT * FROM plain WHERE k IN (2, 3, 4, 5) AND c > 0 AND v > 31 LIMIT 3 ALLOW FILTERING",
      "SELECT * FROM events WHERE k IN (1, 2) AND owner = 'o2' ALLOW FILTERING",
      "SELECT * FROM events WHERE k = 3 AND c > 2 AND v = 'v7' ALLOW FILTERING",
      "SELECT COUNT(*) FROM plain WHERE k IN (2, 4) AND v > 41 ALLOW FILTERING",
      "SELECT COUNT(*), MAX(v) FROM plain WHERE k IN (2, 4) AND v > 41 PER PARTITION LIMIT 1 ALLOW FILTERING",
      // Scans of a table with a static column: each row with its partition's static value, pages
      // resumed inside a partition too; filters on it; DISTINCT.
      "SELECT k, c, owner FROM events WHERE token(k) > 0",
      "SELECT * FROM events WHERE owner = 'o3' ALLOW FILTERING",
      "SELECT k, c, owner FROM events WHERE c > 6 ALLOW FILTERING",
      "SELECT DISTINCT k, owner FROM events",
      "SELECT k, owner FROM events PER PARTITION LIMIT 2",
      "SELECT COUNT(*) FROM events WHERE owner = 'o1' ALLOW FILTERING",
      "SELECT MIN(v), COUNT(*) FROM plain WHERE token(k) > 0 AND c > 1 ALLOW FILTERING",
      // Whole rows of a table with a static column, read as one-row slices that bring the static row.
      "SELECT * FROM events WHERE k = 2 AND c = 3",
      "SELECT k, c, owner, n FROM events WHERE k IN (1, 7, 40, 4) AND c = 9",
      "SELECT owner, v FROM events WHERE k IN (3, 7) AND c = 0 ORDER BY c DESC",
      "SELECT * FROM events WHERE k IN (0, 1, 2, 3) AND c = 5 LIMIT 3",
      "SELECT k, n FROM events WHERE k IN (4, 2, 0) AND c = 6 AND owner = 'o2' ALLOW FILTERING",
      "SELECT COUNT(*), MAX(n) FROM events WHERE k IN (1, 2, 3) AND c = 8",
      // Reads the first run cannot defer, replayed (DeferredRead::replay): 72 rows of an IN, an IN on
      // the clustering key of a table with static columns, slices of 18 partitions.
      "SELECT * FROM plain WHERE k IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) AND c IN (0, 1, 2, 3, 4, 5)",
      "SELECT * FROM plain WHERE k IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) AND c IN (5, 4, 3, 2, 1, 0) LIMIT 30",
      "SELECT k, c, owner FROM events WHERE k IN (1, 2, 7) AND c IN (3, 5)",
      "SELECT * FROM plain WHERE k IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17) AND c > 2",
  };
  for (const auto& cql : statements) {
    for (int32_t page : {0, 1, 2, 5}) {
      defer_ = false;
      int expected_pages = 0, pages = 0;
      const auto expected = Run(cql, page, &expected_pages);
      defer_ = true;
      EXPECT_EQ(Run(cql, page, &pages), expected) << cql << ", pages of " << page;
      EXPECT_EQ(pages, expected_pages) << cql << ", pages of " << page;
      // Only a missing key, or a slice past every row, is empty.
      EXPECT_FALSE(expected.empty() && cql.find("30") == std::string::npos && cql.find("c > 20") == std::string::npos &&
                   cql.find("1234") == std::string::npos)
          << cql;
    }
  }
  defer_ = false;
  // Whole rows and slices were deferred (not every statement ran in one).
  EXPECT_GT(deferred_rows_, 100u);
  EXPECT_GT(deferred_slices_, 10u);
  EXPECT_GT(deferred_ranges_, 100u);
  // Filtered scans were read in steps.
  EXPECT_GT(paused_steps_, 20u);
  // The reads a first run could not defer were replayed, each statement's page in a few runs.
  EXPECT_GT(replayed_reads_, 4u * 4u * 8u);
  EXPECT_GT(replayed_runs_, 4u * 4u);
  std::printf("replayed: %zu runs, %zu reads\n", replayed_runs_, replayed_reads_);
}

// A whole row of a table with a static column is one deferred slice read
// (its static row comes with it), so no thread waits for it on a cluster.
TEST_F(SelectTest, WholeRowsOfATableWithStaticColumnsAreDeferredAsOneSlice) {
  defer_ = true;
  EXPECT_EQ(Run("SELECT k, c, owner, n FROM events WHERE k = 2 AND c = 3"), (V{"k=2 c=3 owner=o2 n=203"}));
  EXPECT_EQ(deferred_slices_, 1u);
  // Partition 40 does not exist: its slice is read too, and returns nothing.
  EXPECT_EQ(Run("SELECT k, owner, n FROM events WHERE k IN (3, 40, 1) AND c = 4"),
            (V{"k=1 owner=o1 n=104", "k=3 owner=o3 n=304"}));
  EXPECT_EQ(deferred_slices_, 4u);
  EXPECT_EQ(deferred_rows_, 0u);
  // A table without static columns reads the row as a row.
  Run("CREATE TABLE ks.nostatic (k int, c int, v int, PRIMARY KEY (k, c))");
  Run("INSERT INTO nostatic (k, c, v) VALUES (1, 2, 3)");
  EXPECT_EQ(Run("SELECT v FROM nostatic WHERE k = 1 AND c = 2"), (V{"v=3"}));
  EXPECT_EQ(deferred_slices_, 4u);
  EXPECT_EQ(deferred_rows_, 1u);
  defer_ = false;
}

// Rows, slices and scans of a table with partition buckets are deferred as
// other tables' are (db/sub_partition_read_async.cc), and so are a bucketed
// table's scans (ScanBucketsAsync); each returns what the run that reads as
// it goes returns, page for page.
TEST_F(SelectTest, ReadsOfTablesWithBucketsAndPartitionBucketsAreDeferred) {
  Run("CREATE TABLE ks.pb (k int, c int, v int, PRIMARY KEY (k, c)) WITH partition_buckets = 4");
  Run("CREATE TABLE ks.pbs (k int, c int, v int, s int static, PRIMARY KEY (k, c)) WITH partition_buckets = 4");
  Run("CREATE TABLE ks.bt (k int, c int, v int, PRIMARY KEY (k, c)) WITH distribution = 'range' AND buckets = 4");
  for (int k = 1; k < 4; ++k) {
    for (int c = 0; c < 6; ++c) {
      const std::string values = std::to_string(k) + ", " + std::to_string(c) + ", " + std::to_string(k * 10 + c);
      Run("INSERT INTO pb (k, c, v) VALUES (" + values + ")");
      Run("INSERT INTO pbs (k, c, v, s) VALUES (" + values + ", " + std::to_string(k) + ")");
      Run("INSERT INTO bt (k, c, v) VALUES (" + values + ")");
    }
  }
  auto same = [&](const std::string& cql) {
    for (int32_t page : {0, 1, 4}) {
      defer_ = false;
      int expected_pages = 0, pages = 0;
      const auto expected = Run(cql, page, &expected_pages);
      ASSERT_FALSE(expected.empty()) << cql;
      defer_ = true;
      EXPECT_EQ(Run(cql, page, &pages), expected) << cql << ", pages of " << page;
      EXPECT_EQ(pages, expected_pages) << cql << ", pages of " << page;
      defer_ = false;
    }
  };
  for (const std::string cql : {"SELECT v FROM pb WHERE k = 1 AND c = 4", "SELECT c, v FROM pb WHERE k = 1 AND c IN (5, 0, 2)",
                                "SELECT k, c, v FROM pb WHERE k IN (3, 1) AND c = 2"}) {
    same(cql);
  }
  EXPECT_GT(deferred_rows_, 0u);
  for (const std::string cql : {"SELECT c FROM pb WHERE k = 1 AND c > 3", "SELECT c, v FROM pb WHERE k IN (2, 3) ORDER BY c DESC",
                                "SELECT c, s FROM pbs WHERE k = 2 AND c = 3", "SELECT * FROM pbs WHERE k IN (1, 3) AND c >= 3",
                                "SELECT COUNT(*) FROM pb WHERE k = 2 AND v > 22 ALLOW FILTERING"}) {
    same(cql);
  }
  EXPECT_GT(deferred_slices_, 10u);
  const size_t slices = deferred_slices_, rows = deferred_rows_;
  for (const std::string cql : {"SELECT k, c FROM pb WHERE token(k) > 0", "SELECT * FROM pbs",
                                "SELECT k, s, v FROM pbs WHERE v > 12 ALLOW FILTERING", "SELECT DISTINCT k, s FROM pbs",
                                "SELECT k, c FROM pb PER PARTITION LIMIT 2"}) {
    same(cql);
  }
  const size_t ranges = deferred_ranges_;
  EXPECT_GT(ranges, 10u);
  for (const std::string cql : {"SELECT * FROM bt", "SELECT k, v FROM bt WHERE v > 20 ALLOW FILTERING",
                                "SELECT k, c FROM bt WHERE k > 1 ALLOW FILTERING", "SELECT k, v FROM bt PER PARTITION LIMIT 2"}) {
    same(cql);
  }
  EXPECT_GT(deferred_ranges_, ranges + 10);
  EXPECT_EQ(deferred_slices_, slices);
  EXPECT_EQ(deferred_rows_, rows);
}

// A page read through a secondary index is one deferred scan
// (RunIndexScanAsync), which returns what the scan that reads as it goes
// does, page by page: indexes on a regular and on a static column, LIMIT,
// PER PARTITION LIMIT, a filter beside the index, an aggregate.
TEST_F(SelectTest, DeferredIndexScansReturnWhatOneRunReturns) {
  Run("CREATE TABLE ks.ix (k int, c int, tag int, v int, owner int static, PRIMARY KEY (k, c))");
  Run("CREATE INDEX ON ks.ix (tag)");
  Run("CREATE INDEX ON ks.ix (owner)");
  Run("CREATE TABLE ks.ixkv (k int PRIMARY KEY, tag int, v int)");
  Run("CREATE INDEX ON ks.ixkv (tag)");
  for (int k = 0; k < 20; ++k) {
    Run("INSERT INTO ixkv (k, tag, v) VALUES (" + std::to_string(k) + ", " + std::to_string(k % 4) + ", " +
        std::to_string(3 * k) + ")");
    if (k % 5 == 4) {  // only a static row
      Run("INSERT INTO ix (k, owner) VALUES (" + std::to_string(k) + ", " + std::to_string(k % 4) + ")");
      continue;
    }
    for (int c = 0; c < 5; ++c) {
      Run("INSERT INTO ix (k, c, tag, v, owner) VALUES (" + std::to_string(k) + ", " + std::to_string(c) + ", " +
          std::to_string((k + c) % 3) + ", " + std::to_string(10 * k + c) + ", " + std::to_string(k % 4) + ")");
    }
  }
  // Rows whose tag changed: the index follows (the old entries go).
  Run("INSERT INTO ix (k, c, tag) VALUES (0, 0, 2)");
  Run("INSERT INTO ixkv (k, tag) VALUES (1, 3)");
  const std::vector<std::string> statements = {
      "SELECT * FROM ix WHERE tag = 1",
      "SELECT k, c, v FROM ix WHERE tag = 2 LIMIT 7",
      "SELECT * FROM ix WHERE tag = 0 PER PARTITION LIMIT 1",
      "SELECT k, c, owner FROM ix WHERE tag = 1 AND v > 100 ALLOW FILTERING",
      "SELECT COUNT(*), MAX(v) FROM ix WHERE tag = 2",
      "SELECT k, c, owner FROM ix WHERE owner = 3",
      "SELECT k, owner FROM ix WHERE owner = 0 LIMIT 5",
      "SELECT * FROM ixkv WHERE tag = 3",
      "SELECT k, v FROM ixkv WHERE tag = 2 AND v < 40 ALLOW FILTERING",
      "SELECT k FROM ixkv WHERE tag = 9",
  };
  for (const auto& cql : statements) {
    whole_partition_pages_ = cql.find("owner =") != std::string::npos;
    for (int32_t page : {0, 1, 2, 5, 16}) {
      defer_ = false;
      int expected_pages = 0, pages = 0;
      const auto expected = Run(cql, page, &expected_pages);
      EXPECT_EQ(expected.empty(), cql.find("= 9") != std::string::npos) << cql;
      defer_ = true;
      EXPECT_EQ(Run(cql, page, &pages), expected) << cql << ", pages of " << page;
      EXPECT_EQ(pages, expected_pages) << cql << ", pages of " << page;
    }
  }
  defer_ = false;
  whole_partition_pages_ = false;
  EXPECT_GE(deferred_index_scans_, statements.size() * 5);
  EXPECT_EQ(deferred_rows_ + deferred_slices_ + deferred_ranges_, 0u);
  EXPECT_EQ(Run("SELECT k, c FROM ix WHERE tag = 2 AND k = 0"), (V{"k=0 c=0", "k=0 c=2"}));
}

// GROUP BY run again for each read it makes (DeferredRead::replay), the
// reads through the asynchronous ones, returns what one run that reads as it
// goes returns, page by page: groups of uneven sizes (chunks that end inside
// groups, a page's end read again), LIMIT, PER PARTITION LIMIT, a partition,
// DESC, a filter, static columns.
TEST_F(SelectTest, ReplayedGroupByReturnsWhatOneRunReturns) {
  Run("CREATE TABLE ks.grouped (a int, b int, c int, v int, PRIMARY KEY (a, b, c))");
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 5; ++b) {
      for (int c = 0; c < (a * 7 + b * 3) % 9 + 1; ++c) {
        Run("INSERT INTO grouped (a, b, c, v) VALUES (" + std::to_string(a) + ", " + std::to_string(b) + ", " +
            std::to_string(c) + ", " + std::to_string(a * 100 + b * 10 + c) + ")");
      }
    }
  }
  const std::vector<std::string> statements = {
      "SELECT a, b, count(*), sum(v) FROM grouped GROUP BY a, b",
      "SELECT a, count(*), max(v) FROM grouped GROUP BY a",
      "SELECT a, b, c FROM grouped GROUP BY a, b",
      "SELECT a, b, count(*) FROM grouped GROUP BY a, b PER PARTITION LIMIT 2 LIMIT 7",
      "SELECT b, min(v) FROM grouped WHERE a = 4 GROUP BY b ORDER BY b DESC",
      "SELECT a, b, sum(v) FROM grouped WHERE a IN (1, 3, 5) GROUP BY a, b",
      "SELECT a, b, count(*) FROM grouped WHERE v > 250 GROUP BY a, b ALLOW FILTERING",
      "SELECT k, owner, count(*) FROM events GROUP BY k",
      "SELECT k, c, count(*) FROM events WHERE k = 2 GROUP BY k, c LIMIT 4",
  };
  for (const auto& cql : statements) {
    for (int32_t page : {0, 1, 2, 3, 7}) {
      defer_ = false;
      int expected_pages = 0, pages = 0;
      const auto expected = Run(cql, page, &expected_pages);
      ASSERT_FALSE(expected.empty()) << cql;
      ASSERT_EQ(expected.front().rfind("ERROR", 0), std::string::npos) << cql << ": " << expected.front();
      defer_ = true;
      EXPECT_EQ(Run(cql, page, &pages), expected) << cql << ", pages of " << page;
      EXPECT_EQ(pages, expected_pages) << cql << ", pages of " << page;
    }
  }
  defer_ = false;
  // Every read went through the caller: runs = reads + one per page.
  EXPECT_GT(replayed_reads_, statements.size() * 5);
  EXPECT_GT(replayed_runs_, replayed_reads_);
  std::printf("GROUP BY replayed: %zu runs, %zu reads\n", replayed_runs_, replayed_reads_);
}

// PER PARTITION LIMIT counts the rows a filter keeps, as Cassandra applies
// it after its row filter, on scans as on partition reads, across pages.
TEST_F(SelectTest, PerPartitionLimitCountsTheRowsAFilterKeeps) {
  Run("CREATE TABLE ks.ppl (k int, c int, v int, PRIMARY KEY (k, c))");
  for (int k = 0; k < 10; ++k) {
    for (int c = 0; c < 6; ++c) {
      Run("INSERT INTO ppl (k, c, v) VALUES (" + std::to_string(k) + ", " + std::to_string(c) + ", " +
          std::to_string(c % 3) + ")");
    }
  }
  for (int32_t page : {0, 1, 3, 7}) {
    for (bool defer : {false, true}) {
      defer_ = defer;
      // v = 2 at c = 2 and 5: two rows a partition, the first of which the read meets after two it drops.
      const auto one = Run("SELECT c FROM ppl WHERE v = 2 PER PARTITION LIMIT 1 ALLOW FILTERING", page);
      EXPECT_EQ(one, std::vector<std::string>(10, "c=2")) << "pages of " << page;
      const auto two = Run("SELECT c FROM ppl WHERE v = 2 PER PARTITION LIMIT 2 ALLOW FILTERING", page);
      ASSERT_EQ(two.size(), 20u) << "pages of " << page;
      for (size_t i = 0; i < two.size(); ++i) EXPECT_EQ(two[i], i % 2 == 0 ? "c=2" : "c=5") << i;
      EXPECT_EQ(Run("SELECT c FROM ppl WHERE k IN (1, 2) AND v = 2 PER PARTITION LIMIT 1 ALLOW FILTERING", page),
                (V{"c=2", "c=2"}));
      EXPECT_EQ(Run("SELECT c FROM ppl WHERE v = 2 PER PARTITION LIMIT 1 LIMIT 3 ALLOW FILTERING", page),
                (V{"c=2", "c=2", "c=2"}));
    }
  }
  defer_ = false;
}

TEST_F(SelectTest, SinglePartitionSlicesOrderAndLimits) {
  EXPECT_EQ(Run("SELECT c, v FROM events WHERE k = 1 AND c >= 7"), (V{"c=7 v=v7", "c=8 v=v8", "c=9 v=v9"}));
  EXPECT_EQ(Run("SELECT c FROM events WHERE k = 1 AND c > 2 AND c <= 4"), (V{"c=3", "c=4"}));
  EXPECT_EQ(Run("SELECT c FROM events WHERE k = 1 AND c IN (5, 1, 3)"), (V{"c=1", "c=3", "c=5"}));
  EXPECT_EQ(Run("SELECT c FROM events WHERE k = 1 ORDER BY c DESC LIMIT 3"), (V{"c=9", "c=8", "c=7"}));
  EXPECT_EQ(Run("SELECT c FROM events WHERE k = 1 AND c = 4"), (V{"c=4"}));
  EXPECT_EQ(Run("SELECT k, c, owner FROM events WHERE k = 2 AND c = 0"), (V{"k=2 c=0 owner=o2"}));
  EXPECT_EQ(Run("SELECT k, c FROM events WHERE k IN (3, 1) AND c < 2"), (V{"k=1 c=0", "k=1 c=1", "k=3 c=0", "k=3 c=1"}));
  EXPECT_EQ(Run("SELECT c FROM events WHERE k IN (1, 2) PER PARTITION LIMIT 1"), (V{"c=0", "c=0"}));
  EXPECT_TRUE(Run("SELECT c FROM events WHERE k = 42").empty());
}

TEST_F(SelectTest, PagingReturnsEveryRowOnceAcrossPagesAndPartitions) {
  auto all = Run("SELECT k, c FROM events");
  ASSERT_EQ(all.size(), 50u);
  for (int page : {1, 3, 7, 10, 49, 50, 100}) {
    int pages = 0;
    EXPECT_EQ(Run("SELECT k, c FROM events", page, &pages), all) << "page size " << page;
    EXPECT_GE(pages, 50 / page);
  }
  auto one = Run("SELECT c FROM events WHERE k = 3 ORDER BY c DESC");
  EXPECT_EQ(Run("SELECT c FROM events WHERE k = 3 ORDER BY c DESC", 4), one);
  EXPECT_EQ(Run("SELECT k, c FROM events WHERE k IN (0, 4) AND c IN (2, 8)", 1).size(), 4u);
  EXPECT_EQ(Run("SELECT k, c FROM events LIMIT 12", 5).size(), 12u);
  EXPECT_EQ(Run("SELECT k, c FROM events PER PARTITION LIMIT 3", 4).size(), 15u);
  EXPECT_EQ(Run("SELECT k, c FROM events WHERE v = 'v5' ALLOW FILTERING", 2).size(), 5u);
}

TEST_F(SelectTest, FilteringNeedsAllowFiltering) {
  auto refused = Run("SELECT * FROM events WHERE v = 'v1'");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find("use ALLOW FILTERING"), std::string::npos);
  EXPECT_NE(Run("SELECT * FROM events WHERE c = 3")[0].find("ALLOW FILTERING"), std::string::npos);
  auto filtered = Run("SELECT k, c FROM events WHERE c = 3 AND n > 200 ALLOW FILTERING");
  EXPECT_EQ(filtered.size(), 3u);
  EXPECT_EQ(Run("SELECT c FROM events WHERE k = 1 AND v IN ('v2', 'v4') ALLOW FILTERING"), (V{"c=2", "c=4"}));
  EXPECT_NE(Run("SELECT * FROM events ORDER BY c DESC")[0].find("ORDER BY is only supported"), std::string::npos);
  EXPECT_NE(Run("SELECT nope FROM events")[0].find("Undefined column name nope"), std::string::npos);
  EXPECT_NE(Run("SELECT * FROM missing")[0].find("unconfigured table missing"), std::string::npos);
}

TEST_F(SelectTest, AggregatesWritetimeTtlAndDistinct) {
  EXPECT_EQ(Run("SELECT count(*) FROM events"), V{"count=50"});
  EXPECT_EQ(Run("SELECT count(*) FROM events WHERE k = 1", 3), V{"count=10"});
  EXPECT_EQ(Run("SELECT min(n), max(n), sum(n) FROM events WHERE k = 2"),
            V{"system.min(n)=200 system.max(n)=209 system.sum(n)=2045"});
  EXPECT_EQ(Run("SELECT avg(n) AS a FROM events WHERE k = 0"), V{"a=4"});
  EXPECT_EQ(Run("SELECT DISTINCT k FROM events").size(), 5u);
  EXPECT_EQ(Run("SELECT k, owner FROM events WHERE k = 4 LIMIT 1"), V{"k=4 owner=o4"});
  Run("INSERT INTO events (k, c, v) VALUES (9, 1, 'x') USING TTL 500 AND TIMESTAMP 777");
  EXPECT_EQ(Run("SELECT writetime(v), ttl(v) FROM events WHERE k = 9 AND c = 1"), V{"writetime(v)=777 ttl(v)=500"});
  EXPECT_NE(Run("SELECT writetime(k) FROM events")[0].find("PRIMARY KEY part"), std::string::npos);
  // A partition with only a static value shows as one row with null clustering.
  Run("INSERT INTO events (k, owner) VALUES (7, 'lonely')");
  EXPECT_EQ(Run("SELECT k, c, owner FROM events WHERE k = 7"), V{"k=7 c=null owner=lonely"});
}

TEST_F(SelectTest, MultiColumnRelationsOnClusteringColumns) {
  Run("CREATE TABLE ks.mc (k int, a int, b int, v text, PRIMARY KEY (k, a, b))");
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) Run("INSERT INTO mc (k, a, b, v) VALUES (1, " + std::to_string(a) + ", " + std::to_string(b) + ", 'x')");
  }
  EXPECT_EQ(Run("SELECT a, b FROM mc WHERE k = 1 AND (a, b) IN ((2, 1), (0, 2))"), (V{"a=0 b=2", "a=2 b=1"}));
  EXPECT_EQ(Run("SELECT a, b FROM mc WHERE k = 1 AND (a, b) > (1, 1) AND (a, b) <= (2, 0)"), (V{"a=1 b=2", "a=2 b=0"}));
  EXPECT_EQ(Run("SELECT a, b FROM mc WHERE k = 1 AND (a, b) = (1, 1)"), (V{"a=1 b=1"}));
  // A tuple of the wrong size is an error, not an exception out of the server (found by the fuzzer).
  EXPECT_NE(Run("SELECT a, b FROM mc WHERE k = 1 AND (a, b) > (1)")[0].find("Expected 2 elements in value tuple, but got 1"),
            std::string::npos);
  EXPECT_NE(Run("SELECT a, b FROM mc WHERE k = 1 AND (a, b) = (1, 2, 3)")[0].find("but got 3"), std::string::npos);
}

TEST_F(SelectTest, PagingStaysCorrectWhileWritesGoOn) {
  // Page through partition 1 while rows are added before and after the cursor:
  // every row present from the start is returned once, in order.
  auto p = ParseStatement("SELECT c FROM events WHERE k = 1");
  ASSERT_TRUE(p.ok());
  BindContext bind;
  bind.values = &values_;
  bind.now_micros = tdb_->now_micros();
  bind.rng = &rng_;
  SelectContext ctx{bind, "ks", 3, std::nullopt};
  std::vector<int64_t> seen;
  for (int page = 0; page < 100; ++page) {
    auto r = ExecuteSelect(tdb_->coordinator(), nullptr, std::get<SelectStatement>(p->statement), ctx);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const auto& row : r->rows) seen.push_back(Deserialize(r->columns[0].type, *row[0])->as_int());
    Run("INSERT INTO events (k, c, v) VALUES (1, " + std::to_string(-1 - page) + ", 'before')");
    Run("INSERT INTO events (k, c, v) VALUES (1, " + std::to_string(100 + page) + ", 'after')");
    if (!r->paging_state) break;
    ctx.paging_state = r->paging_state;
  }
  ASSERT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  ASSERT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());  // no duplicates
  for (int c = 0; c < 10; ++c) EXPECT_NE(std::find(seen.begin(), seen.end(), c), seen.end()) << c;
  for (int64_t c : seen) EXPECT_GE(c, 0);  // rows written behind the cursor are not returned
}

TEST_F(SelectTest, TombstoneGuardrailsWarnThenFail) {
  WriteContext w;
  w.keyspace = "ks";
  w.bind.values = &values_;
  w.bind.now_micros = tdb_->now_micros();
  w.bind.rng = &rng_;
  for (int c = 0; c < 8; ++c) {  // 8 row tombstones in partition 2
    auto p = ParseStatement("DELETE FROM events WHERE k = 2 AND c = " + std::to_string(c));
    auto m = BuildDelete(tdb_->coordinator(), std::get<DeleteStatement>(p->statement), w);
    ASSERT_TRUE(m.ok());
    ASSERT_TRUE(tdb_->db().ApplyBatch(*m).ok());
  }
  auto p = ParseStatement("SELECT c FROM events WHERE k = 2");
  SelectContext ctx{w.bind, "ks", 0, std::nullopt};
  ctx.guardrails.tombstone_warn = 5;
  ctx.guardrails.tombstone_fail = 100;
  auto r = ExecuteSelect(tdb_->coordinator(), nullptr, std::get<SelectStatement>(p->statement), ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 2u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("Read 2 live rows and 8 tombstone cells"), std::string::npos) << r->warnings[0];
  ctx.guardrails.tombstone_fail = 7;
  auto failed = ExecuteSelect(tdb_->coordinator(), nullptr, std::get<SelectStatement>(p->statement), ctx);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message().rfind(kTombstoneOverwhelming, 0), 0u);
  ctx.guardrails.tombstone_warn = 1000;
  EXPECT_TRUE(ExecuteSelect(tdb_->coordinator(), nullptr, std::get<SelectStatement>(p->statement), SelectContext{w.bind, "ks", 0, std::nullopt})->warnings.empty());
}

TEST_F(SelectTest, TimeAndIdentityFunctionsAsSelectors) {
  Run("CREATE TABLE ks.times (k int PRIMARY KEY, ts timestamp, d date)");
  Run("INSERT INTO times (k, ts, d) VALUES (1, '2011-02-03 04:05:00+0000', '2011-02-03')");
  EXPECT_EQ(Run("SELECT toUnixTimestamp(ts) AS ms FROM times WHERE k = 1"), V{"ms=1296705900000"});
  EXPECT_EQ(Run("SELECT toTimestamp(d) AS t FROM times WHERE k = 1"), V{"t=1296691200000"});
  auto p = ParseStatement("SELECT now(), uuid(), currentTimestamp(), toTimestamp(now()) FROM times WHERE k = 1");
  ASSERT_TRUE(p.ok());
  BindContext bind;
  bind.now_micros = tdb_->now_micros();
  bind.rng = &rng_;
  auto r = ExecuteSelect(tdb_->coordinator(), nullptr, std::get<SelectStatement>(p->statement), SelectContext{bind, "ks", 0, std::nullopt});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->columns[0].type.kind(), TypeKind::kTimeuuid);
  EXPECT_EQ(static_cast<unsigned char>((*r->rows[0][0])[6]) >> 4, 1);  // a version-1 uuid
  EXPECT_EQ(static_cast<unsigned char>((*r->rows[0][1])[6]) >> 4, 4);  // a version-4 uuid
  EXPECT_EQ(Deserialize(r->columns[2].type, *r->rows[0][2])->as_int(), tdb_->now_micros() / 1000);
  EXPECT_EQ(*r->rows[0][3], *r->rows[0][2]);
}

// GROUP BY pages end at a group boundary and the next page resumes the read
// after it: paged results equal the unpaged ones at every page size, and
// paging through the whole result reads each row about once, not once per page.
TEST_F(SelectTest, GroupByPagesResumeWhereTheLastOneEnded) {
  Run("CREATE TABLE ks.g (a int, b int, c int, v int, PRIMARY KEY (a, b, c))");
  for (int a = 0; a < 20; ++a) {
    for (int b = 0; b < 5; ++b) {
      for (int c = 0; c < 4; ++c) {
        Run("INSERT INTO g (a, b, c, v) VALUES (" + std::to_string(a) + ", " + std::to_string(b) + ", " +
            std::to_string(c) + ", " + std::to_string(a * 100 + b * 10 + c) + ")");
      }
    }
  }
  auto table = tdb_->db().GetTable("ks", "g");
  ASSERT_TRUE(table.ok());
  auto rows_read = [&] {
    uint64_t n = 0;
    for (const auto& t : tdb_->db().Tablets(**table)) n += t.reads;
    return n;
  };
  const std::string query = "SELECT a, b, count(*), sum(v) FROM g GROUP BY a, b";
  const auto all = Run(query);
  ASSERT_EQ(all.size(), 100u);
  for (int page : {1, 2, 3, 7, 99, 100, 1000}) {
    const uint64_t before = rows_read();
    int pages = 0;
    EXPECT_EQ(Run(query, page, &pages), all) << "page size " << page;
    EXPECT_GE(pages, 100 / page) << "page size " << page;
    // 400 rows, each read about once (a probe row per page), where reading
    // the query again for every page would read 400 per page.
    const uint64_t read = rows_read() - before;
    EXPECT_LT(read, 400u + static_cast<uint64_t>(pages) * 2) << "page size " << page;
    std::printf("GROUP BY page size %d: %d pages, %llu rows read\n", page, pages, static_cast<unsigned long long>(read));
  }
  // LIMIT, PER PARTITION LIMIT and a partition restricted by = count groups across pages too.
  const std::string limited = "SELECT a, b, count(*) FROM g GROUP BY a, b PER PARTITION LIMIT 2 LIMIT 13";
  const auto expected = Run(limited);
  ASSERT_EQ(expected.size(), 13u);
  for (int page : {1, 2, 5}) EXPECT_EQ(Run(limited, page), expected) << "page size " << page;
  const std::string one = "SELECT b, max(v) FROM g WHERE a = 7 GROUP BY b ORDER BY b DESC";
  const auto desc = Run(one);
  ASSERT_EQ(desc.size(), 5u);
  EXPECT_EQ(desc.front(), "b=4 system.max(v)=743");
  for (int page : {1, 2, 4}) EXPECT_EQ(Run(one, page), desc) << "page size " << page;

  // Groups of uneven sizes (1 to 13 rows), so that chunks end inside groups
  // and a page's end is found by reading its last chunk again.
  Run("CREATE TABLE ks.uneven (a int, b int, c int, v int, PRIMARY KEY (a, b, c))");
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 6; ++b) {
      for (int c = 0; c <= (a * 7 + b * 5) % 13; ++c) {
        Run("INSERT INTO uneven (a, b, c, v) VALUES (" + std::to_string(a) + ", " + std::to_string(b) + ", " +
            std::to_string(c) + ", " + std::to_string(c) + ")");
      }
    }
  }
  for (const std::string q : {"SELECT a, b, count(*), sum(v) FROM uneven GROUP BY a, b",
                              "SELECT a, count(*) FROM uneven GROUP BY a",
                              "SELECT a, b, c FROM uneven GROUP BY a, b PER PARTITION LIMIT 4"}) {
    const auto whole = Run(q);
    ASSERT_FALSE(whole.empty()) << q;
    for (int page : {1, 2, 3, 5, 8}) EXPECT_EQ(Run(q, page), whole) << q << " page size " << page;
  }
}

}  // namespace
}  // namespace tessera::cql
