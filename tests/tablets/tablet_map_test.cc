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
  auto m = TabletMap::Create(Table(Distribution::kHash, 4), nullptr, 0);
  ASSERT_EQ(m.tablets().size(), 4u);
  ExpectContiguous(m, 5);
  EXPECT_EQ(m.tablets()[1].start, TablePrefix(5) + EncodeToken(INT64_MIN / 2));
  EXPECT_EQ(m.tablets()[2].start, TablePrefix(5) + EncodeToken(0));
  EXPECT_EQ(m.Find(TablePrefix(5) + EncodeToken(-1)).id, m.tablets()[1].id);
  EXPECT_EQ(m.Find(TablePrefix(5) + EncodeToken(0) + "x").id, m.tablets()[2].id);
  EXPECT_EQ(TabletMap::Create(Table(Distribution::kRange, 4), nullptr, 0).tablets().size(), 1u);
}

TEST(TabletMapTest, SplitAndMergeKeepCoverageAndCountersAreShared) {
  auto m = TabletMap::Create(Table(Distribution::kRange, 1), nullptr, 0);
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

TEST(TabletMapTest, JsonRoundTrip) {
  auto m = TabletMap::Create(Table(Distribution::kHash, 8), nullptr, 77);
  ASSERT_TRUE(m.Split(m.tablets()[3].id, m.tablets()[3].start + "\x01", 78).ok());
  auto back = TabletMap::FromJson(m.ToJson(), nullptr);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), m.ToJson());
  EXPECT_FALSE(TabletMap::FromJson("{}", nullptr).ok());
}

}  // namespace
}  // namespace tessera
