// Detection through the database: partition guardrails measured while data
// is written, tail hotspots and hot partitions in key advice, and the
// balancer's load split and holds, all on the test clock.
#include <gtest/gtest.h>

#include "db/key_advice.h"
#include "db/tablet_balancer.h"
#include "keys/storage_key.h"
#include "tests/db/test_util.h"

namespace tessera::testing {
namespace {

const KeyAdvice* FindAdvice(const std::vector<KeyAdvice>& all, const std::string& kind) {
  for (const auto& a : all) {
    if (a.kind == kind) return &a;
  }
  return nullptr;
}

TEST(DetectionTest, APartitionPastTheWarnThresholdWarnsWritersAndIsListed) {
  TestDatabase db("large_partition", TestDatabase::Configure{[](DatabaseOptions* o) {
    o->guardrails.partition_rows_warn = 100;
    o->guardrails.partition_rows_fail = 300;
  }});
  auto t = MakeTable(db.db(), "events", Distribution::kHash, {"k:int:pk", "c:int:ck", "v:text:regular"});
  TabletBalancer balancer(&db.db(), BalancerOptions{});
  std::vector<std::string> warnings;
  for (int c = 0; c < 150; ++c) {
    ASSERT_TRUE(db->ApplyBatch({InsertRow(t, {Int(7)}, {Int(c)}, {{"v", "x"}})}, &warnings).ok());
  }
  ASSERT_TRUE(db->Apply(InsertRow(t, {Int(8)}, {Int(0)}, {{"v", "x"}})).ok());
  EXPECT_TRUE(warnings.empty());  // not measured yet: the balancer measures between writes
  balancer.RunOnce();
  auto large = db->large_partitions().All();
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0].rows, 150u);
  EXPECT_GT(large[0].bytes, 150u * 10);
  ASSERT_TRUE(db->ApplyBatch({InsertRow(t, {Int(7)}, {Int(150)}, {{"v", "x"}})}, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("Partition ks.events 7 has 150 rows"), std::string::npos) << warnings[0];
  warnings.clear();
  ASSERT_TRUE(db->ApplyBatch({InsertRow(t, {Int(8)}, {Int(1)}, {{"v", "x"}})}, &warnings).ok());
  EXPECT_TRUE(warnings.empty());  // other partitions are fine
  const auto advice = ComputeKeyAdvice(db.db());
  const KeyAdvice* a = FindAdvice(advice, "partition_near_limit");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->subject, "7");
  EXPECT_NE(a->advice.find("time bucket"), std::string::npos);
  // Grown to the fail threshold: measured again, then writes are refused and nothing is written.
  for (int c = 151; c < 320; ++c) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(7)}, {Int(c)}, {{"v", "x"}})).ok());
  balancer.RunOnce();
  auto refused = db->Apply(InsertRow(t, {Int(7)}, {Int(1000)}, {{"v", "x"}}));
  EXPECT_TRUE(refused.IsInvalidArgument()) << refused.ToString();
  auto row = db->ReadRow(t, {Int(7)}, {Int(1000)});
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->has_value());
}

TEST(DetectionTest, MonotonicInsertsOnARangeTableAreATailHotspotNamingTheColumn) {
  TestDatabase db("tail_hotspot");
  auto t = MakeTable(db.db(), "log", Distribution::kRange, {"ts:bigint:pk", "host:text:pk", "v:text:regular"});
  for (int i = 0; i < 600; ++i) {  // more than KeySample::kTailLag: advice judges a full lag window
    ASSERT_TRUE(db->Apply(InsertRow(t, {Bigint(1000 + i), Text("h" + std::to_string(i % 7))}, {}, {{"v", "x"}})).ok());
  }
  db.AdvanceSeconds(1);
  auto advice = ComputeKeyAdvice(db.db());
  const KeyAdvice* a = FindAdvice(advice, "monotonic_leading_key");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->subject, "ts");
  EXPECT_DOUBLE_EQ(a->score, 1.0);  // one tablet: it is the last and takes every write
  EXPECT_NE(a->advice.find("swap the key order to put host before ts"), std::string::npos) << a->advice;
  // The same rows written in random order are no tail.
  auto u = MakeTable(db.db(), "shuffled", Distribution::kRange, {"ts:bigint:pk", "v:text:regular"});
  for (int i = 0; i < 600; ++i) {
    ASSERT_TRUE(db->Apply(InsertRow(u, {Bigint((i * 7919) % 600)}, {}, {{"v", "x"}})).ok());
  }
  for (const auto& x : ComputeKeyAdvice(db.db())) EXPECT_FALSE(x.table == "shuffled") << x.kind;
}

TEST(DetectionTest, AHammeredPartitionIsHeldNotSplitAndGetsBuckets) {
  TestDatabase db("hammered", TestDatabase::Configure{[](DatabaseOptions* o) {
    o->balancer.split_rows_per_second = 100;
    o->balancer.split_sustain_micros = 2'000'000;
  }});
  auto t = MakeTable(db.db(), "counts", Distribution::kHash, {"k:int:pk", "c:int:ck", "v:text:regular"}, 1);
  TabletBalancer balancer(&db.db(), db->balancer_options());
  for (int second = 0; second < 5; ++second) {
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(db->Apply(InsertRow(t, {Int(42)}, {Int(second * 1000 + i)}, {{"v", "x"}})).ok());
    }
    db.AdvanceSeconds(1);
    balancer.RunOnce();
  }
  EXPECT_EQ(db->Tablets(*t).size(), 1u);  // a partition is never split
  auto holds = balancer.Holds();
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].condition, "single_partition");
  size_t hold_events = 0;
  for (const auto& e : db->TabletEvents()) hold_events += e.kind == "hold";
  EXPECT_EQ(hold_events, 1u);  // recorded once, not every round
  const auto advice = ComputeKeyAdvice(db.db());
  const KeyAdvice* a = FindAdvice(advice, "hot_partition");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->subject, "42");
  EXPECT_NE(a->advice.find("16 buckets"), std::string::npos) << a->advice;
}

TEST(DetectionTest, SustainedLoadOnOneRangeSplitsItAtTheBalancingKey) {
  TestDatabase db("load_split", TestDatabase::Configure{[](DatabaseOptions* o) {
    o->balancer.split_rows_per_second = 500;
    o->balancer.split_sustain_micros = 3'000'000;
  }});
  auto t = MakeTable(db.db(), "r", Distribution::kRange, {"k:int:pk", "v:text:regular"});
  for (int k = 0; k < 1000; ++k) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(k)}, {}, {{"v", "x"}})).ok());
  db.AdvanceSeconds(30);  // the inserts leave the window
  TabletBalancer balancer(&db.db(), db->balancer_options());
  // 800 reads/s, uniform over keys 600..999. The ten-second average passes
  // 500/s after about 7 s; 3 s later the tablet splits, once: each half then
  // carries about 400/s.
  uint32_t x = 1;
  for (int second = 0; second < 16; ++second) {
    for (int i = 0; i < 800; ++i) {
      x = x * 1103515245 + 12345;
      ASSERT_TRUE(db->ReadRow(t, {Int(600 + static_cast<int>((x >> 8) % 400))}, {}).ok());
    }
    db.AdvanceSeconds(1);
    balancer.RunOnce();
  }
  auto tablets = db->Tablets(*t);
  ASSERT_EQ(tablets.size(), 2u);
  // The cut sits near key 800, the median of the load, not 500, the median of the data.
  std::vector<std::string> boundary_pk = *DecodePartitionPosition(*t, tablets[1].start);
  EXPECT_NEAR(AsInt(boundary_pk[0]), 800, 60);
  auto events = db->TabletEvents();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, "split");
  EXPECT_NE(events.back().reason.find("load:"), std::string::npos) << events.back().reason;
}

}  // namespace
}  // namespace tessera::testing
