// Bucketed range tables (TableSchema::buckets): the layout, merged scans with
// logical paging cursors, the online count change, persistence; and sequences.
#include <gtest/gtest.h>

#include <set>

#include "keys/storage_key.h"
#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

std::shared_ptr<const TableSchema> MakeBucketed(Database& db, uint32_t buckets) {
  auto plain = MakeTable(db, "t", Distribution::kRange, {"k:int:pk", "c:int:ck", "v:text:regular"}, 1);
  TableSchema t = *plain;
  EXPECT_TRUE(db.DropTable("ks", "t").ok());
  t.id = 0;
  t.name = "b";
  t.buckets.versions = {BucketVersion{"", buckets}};
  auto created = db.CreateTable(t);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  return *created;
}

// Every row of the table through pages of `page` rows: (k, c) in order.
std::vector<std::pair<int64_t, int64_t>> ScanAll(Database& db, const std::shared_ptr<const TableSchema>& t,
                                                 size_t page) {
  RangeRequest req;
  req.range = WholeTableRange(*t);
  req.limit = page;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int pages = 0; pages < 100000; ++pages) {
    auto r = db.ScanRange(t, req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) break;
    for (const auto& p : r->partitions) {
      for (const auto& row : p.rows) out.emplace_back(AsInt(p.partition_key[0]), AsInt(row.clustering[0]));
    }
    if (r->next_cursor.empty()) break;
    req.cursor = r->next_cursor;
  }
  return out;
}

TEST(BucketedTableTest, ScansMergeTheBucketsInKeyOrderAcrossACountChangeAndARestart) {
  TestDatabase db("bucketed_scan");
  auto t = MakeBucketed(db.db(), 4);
  EXPECT_EQ(db->Tablets(*t).size(), 4u);  // one tablet per bucket
  std::vector<std::pair<int64_t, int64_t>> expected;
  auto write = [&](int from, int to) {
    for (int k = from; k < to; ++k) {
      for (int c = 0; c < 3; ++c) {
        ASSERT_TRUE(db->Apply(InsertRow(t, {Int(k)}, {Int(c)}, {{"v", "x"}})).ok());
        expected.emplace_back(k, c);
      }
    }
  };
  write(0, 100);
  auto changed = db->ChangeBucketCount(*t, 16, "test");
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_EQ((*changed)->buckets.versions.size(), 2u);
  EXPECT_EQ(db->Tablets(**changed).size(), 16u);  // split at the new buckets' starts
  write(100, 200);
  // A write through the old schema snapshot (a prepared statement's) lands where the new layout reads.
  ASSERT_TRUE(db->Apply(InsertRow(t, {Int(500)}, {Int(0)}, {{"v", "late"}})).ok());
  expected.emplace_back(500, 0);
  auto old_row = db->ReadRow(t, {Int(500)}, {Int(0)});
  ASSERT_TRUE(old_row.ok() && *old_row);
  for (int restart = 0; restart < 2; ++restart) {
    if (restart) db.Reopen();
    auto current = db->GetTable("ks", "b");
    ASSERT_TRUE(current.ok());
    for (size_t page : {1u, 7u, 5000u}) EXPECT_EQ(ScanAll(db.db(), *current, page), expected) << page;
    auto row = db->ReadRow(*current, {Int(42)}, {Int(1)});
    ASSERT_TRUE(row.ok() && *row);
  }
}

TEST(BucketedTableTest, AKeyRangePagesInKeyOrderAndForeignCursorsAreRefused) {
  TestDatabase db("bucketed_range");
  auto t = MakeBucketed(db.db(), 8);
  for (int k = 0; k < 50; ++k) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(k)}, {Int(0)}, {{"v", "x"}})).ok());
  std::vector<std::string> lo{Int(10)}, hi{Int(20)};
  auto range = PartitionKeyRange(*t, &lo, true, &hi, false);
  ASSERT_TRUE(range.ok());
  RangeRequest req;
  req.range = *range;
  req.limit = 3;
  std::vector<int64_t> keys;
  for (;;) {
    auto r = db->ScanRange(t, req);
    ASSERT_TRUE(r.ok());
    for (const auto& p : r->partitions) keys.push_back(AsInt(p.partition_key[0]));
    if (r->next_cursor.empty()) break;
    req.cursor = r->next_cursor;
  }
  std::vector<int64_t> want;
  for (int k = 10; k < 20; ++k) want.push_back(k);
  EXPECT_EQ(keys, want);
  req.cursor = EncodePagingCursor(0, TablePrefix(t->id + 7) + "xyz");
  EXPECT_TRUE(db->ScanRange(t, req).status().IsInvalidArgument());
}

TEST(SequencesTest, ValuesAreUniquePositiveAndSurviveRestarts) {
  TestDatabase db("sequences");
  ASSERT_TRUE(db->sequences().Create("ks", "s", SequenceOptions{}, false).ok());
  EXPECT_TRUE(db->sequences().Create("ks", "s", SequenceOptions{}, false).IsAlreadyExists());
  std::set<int64_t> seen;
  for (int restart = 0; restart < 3; ++restart) {
    if (restart) db.Reopen();
    for (int i = 0; i < 1500; ++i) {
      auto v = db->sequences().Next("ks", "s");
      ASSERT_TRUE(v.ok());
      EXPECT_GT(*v, 0);
      EXPECT_TRUE(seen.insert(*v).second) << *v;
    }
  }
  // The first values are the bit-reversed counters 1, 2, 3: far apart.
  TestDatabase fresh("sequences_first");
  ASSERT_TRUE(fresh->sequences().Create("ks", "s", SequenceOptions{}, false).ok());
  EXPECT_EQ(*fresh->sequences().Next("ks", "s"), int64_t{1} << 62);
  EXPECT_EQ(*fresh->sequences().Next("ks", "s"), int64_t{1} << 61);
  EXPECT_EQ(*fresh->sequences().Next("ks", "s"), (int64_t{1} << 62) | (int64_t{1} << 61));
  SequenceOptions bad;
  bad.kind = "bit_reversed";
  EXPECT_TRUE(fresh->sequences().Create("ks", "t", bad, false).IsInvalidArgument());
  EXPECT_TRUE(fresh->sequences().Next("ks", "none").status().IsNotFound());
}

}  // namespace
}  // namespace tessera
