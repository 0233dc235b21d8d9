#include "keyviz/patterns.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "keyviz/diagnosis.h"

namespace tessera::keyviz {
namespace {

// Builds a history from per-column write counts: columns[c][i] is what
// tablet i (key "k<i>") took in column c; tablet ids are stable unless
// `ids` changes them.
class Builder {
 public:
  explicit Builder(uint32_t table_id) : table_id_(table_id), history_(KeyVizOptions{}) {}
  void Column(const std::vector<uint64_t>& writes, const std::vector<uint64_t>& reads = {}) {
    if (!started_) {
      history_.AddSample(now_, {});
      started_ = true;
    }
    TableCounterSample t;
    t.table_id = table_id_;
    for (size_t i = 0; i < writes.size(); ++i) {
      TabletCounterSample s;
      s.tablet = 1000 * (++column_) + i;  // fresh ids: each column counts from zero
      s.start = i == 0 ? "" : "k" + std::to_string(100 + i);
      s.label = s.start;
      s.writes = writes[i];
      s.reads = i < reads.size() ? reads[i] : 0;
      t.tablets.push_back(s);
    }
    now_ += 1'000'000;
    history_.AddSample(now_, {t});
  }
  const KeyVizHistory& history() const { return history_; }

 private:
  uint32_t table_id_;
  KeyVizHistory history_;
  int64_t now_ = 1'000'000;
  bool started_ = false;
  uint64_t column_ = 0;
};

PatternHints Range() { return {true, 0}; }
PatternHints Hash(double hot = 0) { return {false, hot}; }

TEST(KeyVizPatternTest, WritesOnTheLastTabletOfAGrowingRangeTableAreAMonotonicTail) {
  Builder b(1);
  for (size_t tablets = 1; tablets <= 8; ++tablets) {
    std::vector<uint64_t> w(tablets, 0);
    w.back() = 400;
    if (tablets > 2) w[tablets - 2] = 5;  // stragglers behind the tail
    b.Column(w);
  }
  Pattern p = ClassifyTable(b.history(), 1, Metric::kWrites, Range());
  EXPECT_EQ(p.kind, "monotonic_tail");
  EXPECT_EQ(p.shape, "diagonal");
  EXPECT_GT(p.share, 0.95);
  EXPECT_EQ(p.max_rows, 8u);
  // On a hash table the same numbers are no tail: token order is not insert order.
  EXPECT_NE(ClassifyTable(b.history(), 1, Metric::kWrites, Hash()).kind, "monotonic_tail");
  // Reads are idle.
  EXPECT_EQ(ClassifyTable(b.history(), 1, Metric::kReads, Range()).kind, "idle");
}

TEST(KeyVizPatternTest, OneRangeHotColumnAfterColumnIsAHorizontalBand) {
  Builder b(2);
  b.Column({50, 50, 50, 50});  // the setup writes, spread
  for (int c = 0; c < 10; ++c) b.Column({3, 480, 2, 4});
  Pattern p = ClassifyTable(b.history(), 2, Metric::kWrites, Hash(0.97));
  EXPECT_EQ(p.kind, "hot_band");
  EXPECT_EQ(p.shape, "horizontal band");
  EXPECT_GT(p.share, 0.85);
  EXPECT_NE(p.evidence.find("97%"), std::string::npos) << p.evidence;
}

TEST(KeyVizPatternTest, LoadSpreadOverTheTabletsIsEven) {
  Builder b(3);
  for (uint64_t c = 0; c < 10; ++c) b.Column({100 + c, 90, 120, 80 + c, 110, 95, 105, 100});
  EXPECT_EQ(ClassifyTable(b.history(), 3, Metric::kWrites, Range()).kind, "even");
  // Busier tablets that change from column to column are still a spread when none dominates.
  Builder skewed(3);
  for (int c = 0; c < 10; ++c) {
    std::vector<uint64_t> w(11, 20);
    w[c % 11] = 140;  // about 42% of a column, as the demo's host-first table
    skewed.Column(w);
  }
  EXPECT_EQ(ClassifyTable(skewed.history(), 3, Metric::kWrites, Range()).kind, "even");
}

TEST(KeyVizPatternTest, OneHotRangeAtATimeThatMovesIsAMovingHotSpot) {
  Builder b(4);
  for (int c = 0; c < 12; ++c) {
    std::vector<uint64_t> w(6, 1);
    w[c % 5] = 500;  // never the last tablet
    b.Column(w);
  }
  EXPECT_EQ(ClassifyTable(b.history(), 4, Metric::kWrites, Range()).kind, "moving_hotspot");
}

TEST(KeyVizPatternTest, TooLittleLoadOrOneTabletNamesNoShape) {
  Builder idle(5);
  idle.Column({10, 10});
  EXPECT_EQ(ClassifyTable(idle.history(), 5, Metric::kWrites, Range()).kind, "idle");
  Builder one(6);
  for (int c = 0; c < 5; ++c) one.Column({300});
  EXPECT_EQ(ClassifyTable(one.history(), 6, Metric::kWrites, Range()).kind, "single_tablet");
  // Another table's rows are not this table's.
  EXPECT_EQ(ClassifyTable(one.history(), 99, Metric::kWrites, Range()).kind, "idle");
}

TableSchema AccessByTime() {
  TableSchema t;
  t.keyspace = "demo";
  t.name = "access_by_time";
  t.distribution = Distribution::kRange;
  t.columns = {{0, "ts", CqlType::Scalar(TypeKind::kTimestamp), ColumnKind::kPartitionKey, SortOrder::kAsc},
               {1, "seq", CqlType::Scalar(TypeKind::kInt), ColumnKind::kClustering, SortOrder::kDesc},
               {2, "host", CqlType::Scalar(TypeKind::kText), ColumnKind::kRegular, SortOrder::kAsc}};
  return t;
}

TEST(KeyVizDiagnosisTest, ATailGetsABucketLeadingThePartitionKey) {
  Pattern p;
  p.kind = "monotonic_tail";
  Diagnosis d = Diagnose(p, AccessByTime(), {});
  EXPECT_EQ(d.title, "Diagonal: a monotonic tail on ts");
  EXPECT_EQ(d.ddl,
            "CREATE TABLE demo.access_by_time_bucketed (bucket smallint, ts timestamp, seq int, host text, "
            "PRIMARY KEY ((bucket, ts), seq)) WITH CLUSTERING ORDER BY (seq DESC) AND distribution = 'range'");
}

TEST(KeyVizDiagnosisTest, AHotPartitionGetsABucketAfterThePartitionKeyAndAHotRangeHashDistribution) {
  Pattern p;
  p.kind = "hot_band";
  DiagnosisInput in;
  in.hot_partition = "'1995-08-01 12:00:00'";
  in.buckets = 16;
  Diagnosis d = Diagnose(p, AccessByTime(), in);
  EXPECT_EQ(d.title, "Horizontal band: hot partition '1995-08-01 12:00:00'");
  EXPECT_NE(d.ddl.find("PRIMARY KEY ((ts, bucket), seq)"), std::string::npos) << d.ddl;
  EXPECT_NE(d.advice.find("16"), std::string::npos);
  Diagnosis range = Diagnose(p, AccessByTime(), {});
  EXPECT_NE(range.ddl.find("access_by_time_hashed"), std::string::npos);
  EXPECT_NE(range.ddl.find("distribution = 'hash'"), std::string::npos);
  p.kind = "even";
  EXPECT_TRUE(Diagnose(p, AccessByTime(), {}).ddl.empty());
}

TEST(KeyVizDiagnosisTest, NamesThatNeedQuotesAreQuoted) {
  TableSchema t = AccessByTime();
  t.columns[2].name = "Host Name";
  EXPECT_NE(RedesignedTableCql(t, "x", false, false, Distribution::kHash).find("\"Host Name\" text"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::keyviz
