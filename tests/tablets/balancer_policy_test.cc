#include "tablets/balancer_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace tessera {
namespace {

constexpr int64_t kSecond = 1'000'000;

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%08d", i);
  return buf;
}

BalancerOptions Options() {
  BalancerOptions o;
  o.split_rows_per_second = 1000;
  o.split_sustain_micros = 5 * kSecond;
  o.split_size_bytes = 1 << 20;
  o.merge_min_age_micros = 30 * kSecond;
  return o;
}

// A tablet [Key(lo), Key(hi)) whose sample holds keys lo..hi-1 with `weight(k)`.
template <typename Weight>
TabletLoad Loaded(TabletId id, int lo, int hi, double rows_per_second, Weight weight) {
  TabletLoad t;
  t.id = id;
  t.start = Key(lo);
  t.end = Key(hi);
  t.age_micros = 100 * kSecond;
  t.rows_per_second = rows_per_second;
  for (int k = lo; k < hi; ++k) {
    if (double w = weight(k); w > 0) t.sample.keys.emplace_back(Key(k), w);
  }
  return t;
}

TableLoad OneTablet(TabletLoad t) {
  TableLoad table;
  table.tablets.push_back(std::move(t));
  return table;
}

TEST(BalancerPolicyTest, SplitsASustainedHotTabletAtTheLoadMedian) {
  // Keys 0..99; the load sits on keys 60..99 (uniform): the balanced cut is key 80.
  auto table = OneTablet(Loaded(1, 0, 100, 3000, [](int k) { return k >= 60 ? 1.0 : 0.0; }));
  HotSince hot;
  auto o = Options();
  EXPECT_TRUE(PlanTable(table, o, 10 * kSecond, &hot).empty());  // hot, but not for long enough
  EXPECT_TRUE(PlanTable(table, o, 14 * kSecond, &hot).empty());
  auto d = PlanTable(table, o, 15 * kSecond, &hot);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, BalancerDecision::Kind::kSplit);
  ASSERT_TRUE(d[0].split_position.has_value());
  EXPECT_EQ(*d[0].split_position, Key(80));
  EXPECT_NE(d[0].reason.find("(50% / 50%)"), std::string::npos) << d[0].reason;
}

// The placement balancer's cut (LoadSplitPosition): a share of the load on
// one side, whichever side is nearer to it.
TEST(BalancerPolicyTest, ALoadSplitPositionCutsOffTheShareAskedFor) {
  // Keys 0..99, uniform: a third on the left is key 33 (the cut before it
  // leaves keys 0..32, 33%), or key 67 on the right, equally near.
  auto table = OneTablet(Loaded(1, 0, 100, 300, [](int) { return 1.0; }));
  std::string refusal;
  double left = 0;
  auto cut = LoadSplitPosition(table, table.tablets[0], Options(), &refusal, 1.0 / 3, &left);
  ASSERT_TRUE(cut.has_value()) << refusal;
  EXPECT_TRUE(*cut == Key(33) || *cut == Key(67)) << *cut;
  EXPECT_NEAR(std::min(left, 1 - left), 0.33, 0.005);
  // The default: halves, as PlanTable cuts.
  cut = LoadSplitPosition(table, table.tablets[0], Options(), &refusal);
  ASSERT_TRUE(cut.has_value()) << refusal;
  EXPECT_EQ(*cut, Key(50));
  // Load only on keys 60..99: 10% is 4 of its 40 keys, from either end.
  table = OneTablet(Loaded(1, 0, 100, 300, [](int k) { return k >= 60 ? 1.0 : 0.0; }));
  cut = LoadSplitPosition(table, table.tablets[0], Options(), &refusal, 0.1, &left);
  ASSERT_TRUE(cut.has_value()) << refusal;
  EXPECT_TRUE(*cut == Key(64) || *cut == Key(96)) << *cut;
  EXPECT_NEAR(std::min(left, 1 - left), 0.1, 1e-9);
}

TEST(BalancerPolicyTest, ACoolingTabletStartsItsSustainOver) {
  auto hot_table = OneTablet(Loaded(1, 0, 100, 3000, [](int) { return 1.0; }));
  auto cool_table = OneTablet(Loaded(1, 0, 100, 10, [](int) { return 1.0; }));
  HotSince hot;
  auto o = Options();
  PlanTable(hot_table, o, 10 * kSecond, &hot);
  PlanTable(cool_table, o, 12 * kSecond, &hot);  // dips below: not hot any more
  EXPECT_TRUE(PlanTable(hot_table, o, 16 * kSecond, &hot).empty());
  EXPECT_EQ(PlanTable(hot_table, o, 21 * kSecond, &hot).size(), 1u);
}

TEST(BalancerPolicyTest, HoldsWhenAllLoadIsOnOnePartition) {
  auto table = OneTablet(Loaded(1, 0, 100, 5000, [](int k) { return k == 42 ? 5000.0 : 0.0; }));
  HotSince hot;
  for (int64_t s = 0; s < 60; s += 5) {
    auto d = PlanTable(table, Options(), s * kSecond, &hot);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].kind, BalancerDecision::Kind::kHold);
    EXPECT_EQ(d[0].condition, "single_partition");
  }
}

TEST(BalancerPolicyTest, HoldsWhenOnePartitionDominates) {
  auto table = OneTablet(Loaded(1, 0, 100, 5000, [](int k) { return k == 42 ? 950.0 : (k % 10 == 0 ? 5.0 : 0.0); }));
  HotSince hot;
  auto d = PlanTable(table, Options(), 100 * kSecond, &hot);
  d = PlanTable(table, Options(), 200 * kSecond, &hot);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].condition, "skewed_partition");
}

TEST(BalancerPolicyTest, HoldsAnAppendOnlyTailInsteadOfChasingIt) {
  auto t = Loaded(1, 0, 1000, 4000, [](int k) { return k >= 900 ? 1.0 : 0.0; });
  t.writes_per_second = 4000;
  t.sample.writes = 4000;
  t.sample.advances = 3990;
  auto table = OneTablet(t);
  HotSince hot;
  for (int64_t s = 0; s < 60; s += 5) {
    auto d = PlanTable(table, Options(), s * kSecond, &hot);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].condition, "append_tail");
    EXPECT_NE(d[0].reason.find("new last tablet"), std::string::npos);
  }
  // Filling one partition at a time (series after series) near_tail the tail
  // but seldom advances it: that is not an append-only key.
  table.tablets[0].sample.advances = 5;
  table.tablets[0].sample.near_tail = 3990;
  EXPECT_FALSE(IsAppendTail(table.tablets[0], Options()));
  table.tablets[0].sample.near_tail = 0;
  // The same keys written in random order are not a tail: the tablet splits.
  table.tablets[0].sample.advances = 12;
  auto d = PlanTable(table, Options(), 100 * kSecond, &hot);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, BalancerDecision::Kind::kSplit);
}

TEST(BalancerPolicyTest, SplitsByMedianWhenTooLarge) {
  auto t = Loaded(1, 0, 100, 1, [](int) { return 1.0; });
  t.size_bytes = 2 << 20;
  HotSince hot;
  auto d = PlanTable(OneTablet(t), Options(), kSecond, &hot);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, BalancerDecision::Kind::kSplit);
  EXPECT_FALSE(d[0].split_position.has_value());
  EXPECT_NE(d[0].reason.find("size: 2.0 MiB above 1.0 MiB"), std::string::npos) << d[0].reason;
}

TEST(BalancerPolicyTest, MergesSmallColdOldNeighboursDownToTheInitialCount) {
  TableLoad table;
  for (int i = 0; i < 3; ++i) table.tablets.push_back(Loaded(i + 1, i * 10, i * 10 + 10, 5, [](int) { return 1.0; }));
  table.min_tablets = 2;
  HotSince hot;
  auto d = PlanTable(table, Options(), kSecond, &hot);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, BalancerDecision::Kind::kMerge);
  EXPECT_EQ(d[0].tablet, 1u);
  table.tablets.pop_back();  // two left: the initial count
  EXPECT_TRUE(PlanTable(table, Options(), kSecond, &hot).empty());
  table.min_tablets = 1;
  table.tablets[1].age_micros = 10 * kSecond;  // just split: too young to merge back
  EXPECT_TRUE(PlanTable(table, Options(), kSecond, &hot).empty());
  table.tablets[1].age_micros = 100 * kSecond;
  table.tablets[1].rows_per_second = 400;  // together above 25% of the split threshold
  EXPECT_TRUE(PlanTable(table, Options(), kSecond, &hot).empty());
}

}  // namespace
}  // namespace tessera
