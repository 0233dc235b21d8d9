#include "tablets/tablet_map.h"

#include <gtest/gtest.h>

#include "keys/storage_key.h"

namespace tessera {
namespace {

TableSchema Table(Distribution d, uint32_t n) {
  TableSchema t;
  t.keyspace = "ks";
  t.name = "t";
  t.id = 5;
  t.distribution = d;
  t.options.initial_tablets = n;
  t.columns = {{0, "k", *CqlType::Parse("int"), ColumnKind::kPartitionKey, SortOrder::kAsc}};
  return t;
}

void ExpectContiguous(const TabletMap& m, uint32_t table_id) {
  ASSERT_FALSE(m.tablets().empty());
  EXPECT_EQ(m.tablets().front().start, TablePrefix(table_id));
  EXPECT_EQ(m.tablets().back().end, TablePrefix(table_id + 1));
  for (size_t i = 1; i < m.tablets().size(); ++i) EXPECT_EQ(m.tablets()[i - 1].end, m.tablets()[i].start);
}

TEST(TabletMapTest, HashTablesStartWithEqualTokenRanges) {
  auto m = TabletMap::Create(Table(Distribution::kHash, 4), 0);
  ASSERT_EQ(m.tablets().size(), 4u);
  ExpectContiguous(m, 5);
  EXPECT_EQ(m.tablets()[1].start, TablePrefix(5) + EncodeToken(INT64_MIN / 2));
  EXPECT_EQ(m.tablets()[2].start, TablePrefix(5) + EncodeToken(0));
  EXPECT_EQ(m.Find(TablePrefix(5) + EncodeToken(-1)).id, m.tablets()[1].id);
  EXPECT_EQ(m.Find(TablePrefix(5) + EncodeToken(0) + "x").id, m.tablets()[2].id);
  EXPECT_EQ(TabletMap::Create(Table(Distribution::kRange, 4), 0).tablets().size(), 1u);
}

TEST(TabletMapTest, SplitAndMergeKeepCoverageAndCountersAreShared) {
  auto m = TabletMap::Create(Table(Distribution::kRange, 1), 0);
  TabletId first = m.tablets()[0].id;
  EXPECT_FALSE(m.Split(first, TablePrefix(5), 1).ok());  // not strictly inside
  auto ids = m.Split(first, TablePrefix(5) + "m", 1);
  ASSERT_TRUE(ids.ok());
  ExpectContiguous(m, 5);
  EXPECT_EQ(m.Find(TablePrefix(5) + "a").id, ids->first);
  EXPECT_EQ(m.Find(TablePrefix(5) + "m").id, ids->second);
  TabletMap copy = m;
  copy.tablets()[0].counters->writes += 3;
  EXPECT_EQ(m.tablets()[0].counters->writes, 3u);
  EXPECT_FALSE(m.Merge(ids->second, 2).ok());  // last tablet has no right neighbour
  auto merged = m.Merge(ids->first, 2);
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(m.tablets().size(), 1u);
  ExpectContiguous(m, 5);
  EXPECT_FALSE(m.Split(12345, "x", 3).ok());
}

TEST(TabletMapTest, SplitHalvesAndAMergedTabletKeepTheirShareOfTheRates) {
  constexpr int64_t kSecond = 1'000'000;
  const int64_t t0 = 1'700'000'000 * kSecond;
  auto m = TabletMap::Create(Table(Distribution::kRange, 1), t0);
  const std::string lo = TablePrefix(5) + "a", hi = TablePrefix(5) + "x";
  // 30 s of 100 replica reads a second, three in four of them at "a".
  TabletCounters& c = *m.tablets()[0].counters;
  for (int s = 0; s < 30; ++s) {
    for (int i = 0; i < 100; ++i) {
      const int64_t now = t0 + s * kSecond + i * 1000;
      c.CountReplicaRequest(now, /*write=*/false);
      c.CountRead(now, 1, 10);
      c.sample.Add(now, i % 4 == 3 ? hi : lo, 1, /*write=*/false);
    }
  }
  const int64_t split_at = t0 + 30 * kSecond + 1;
  auto ids = m.Split(m.tablets()[0].id, TablePrefix(5) + "m", split_at);
  ASSERT_TRUE(ids.ok());
  const Tablet& left = m.tablets()[0];
  const Tablet& right = m.tablets()[1];
  // Right after the split, neither half reads as idle: they share the
  // parent's 100/s as its sample shares the load (about 3 to 1).
  const double l = left.counters->replica_read_rate.Rate(split_at, left.rates_since_micros());
  const double r = right.counters->replica_read_rate.Rate(split_at, right.rates_since_micros());
  EXPECT_NEAR(l + r, 100.0, 1.0);
  EXPECT_NEAR(l, 75.0, 10.0);
  EXPECT_NEAR(left.counters->read_rate.Rate(split_at, left.rates_since_micros()), l, 1.0);
  EXPECT_EQ(left.rates_since_micros(), t0);  // the parent's history, not a young tablet's
  EXPECT_EQ(left.created_micros, split_at);  // while its age is its own
  // 5 s on, new reads add to the inherited ones; a merge sums both.
  for (int s = 30; s < 35; ++s) {
    for (int i = 0; i < 100; ++i) m.Find(lo).counters->CountReplicaRequest(t0 + s * kSecond + i * 1000, false);
  }
  const int64_t merge_at = t0 + 35 * kSecond + 1;
  const double before = m.tablets()[0].counters->replica_read_rate.Rate(merge_at, m.tablets()[0].rates_since_micros()) +
                        m.tablets()[1].counters->replica_read_rate.Rate(merge_at, m.tablets()[1].rates_since_micros());
  auto merged = m.Merge(ids->first, merge_at);
  ASSERT_TRUE(merged.ok());
  const Tablet& whole = m.tablets()[0];
  EXPECT_NEAR(whole.counters->replica_read_rate.Rate(merge_at, whole.rates_since_micros()), before, 1.0);
  EXPECT_NEAR(before, 100.0, 1.0);  // 5 s inherited at 100/s, 5 s of new reads at 100/s
}

TEST(TabletMapTest, JsonRoundTrip) {
  auto m = TabletMap::Create(Table(Distribution::kHash, 8), 77);
  ASSERT_TRUE(m.Split(m.tablets()[3].id, m.tablets()[3].start + "\x01", 78).ok());
  auto back = TabletMap::FromJson(m.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), m.ToJson());
  EXPECT_FALSE(TabletMap::FromJson("{}").ok());
}

}  // namespace
}  // namespace tessera
