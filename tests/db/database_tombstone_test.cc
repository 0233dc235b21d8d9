#include <gtest/gtest.h>

#include "keys/storage_key.h"
#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

std::vector<int64_t> Clusterings(Database& db, const std::shared_ptr<const TableSchema>& t, const std::string& pk) {
  std::vector<int64_t> out;
  auto r = db.ReadSlice(t, {Text(pk)}, SliceRequest{});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& row : r->partition.rows) out.push_back(AsInt(row.clustering[0]));
  return out;
}

std::shared_ptr<const TableSchema> Fill(TestDatabase& db, int32_t gc_grace) {
  auto t = MakeTable(db.db(), "t", Distribution::kRange, {"k:text:pk", "c:int:ck", "v:text:regular"});
  TableSchema g = *t;
  g.options.gc_grace_seconds = gc_grace;
  t = *db->AlterTable(g);
  for (const char* pk : {"a", "b"}) {
    for (int c = 0; c < 10; ++c) EXPECT_TRUE(db->Apply(InsertRow(t, {Text(pk)}, {Int(c)}, {{"v", "x"}})).ok());
  }
  return t;
}

TEST(DatabaseTombstoneTest, RowRangeAndPartitionDeletions) {
  TestDatabase db("tombstones");
  auto t = Fill(db, 864000);
  Mutation del_row;  // DELETE FROM t WHERE k='a' AND c=3
  del_row.table = t;
  del_row.partition_key = {Text("a")};
  del_row.rows.push_back(RowWrite{{Int(3)}, false, false, true, {}});
  ASSERT_TRUE(db->Apply(del_row).ok());
  Mutation del_range;  // DELETE FROM t WHERE k='a' AND c > 5 AND c <= 7
  del_range.table = t;
  del_range.partition_key = {Text("a")};
  del_range.range_deletions.push_back({{{Int(5)}, false}, {{Int(7)}, true}});
  ASSERT_TRUE(db->Apply(del_range).ok());
  EXPECT_EQ(Clusterings(db.db(), t, "a"), (std::vector<int64_t>{0, 1, 2, 4, 5, 8, 9}));

  Mutation del_partition;
  del_partition.table = t;
  del_partition.partition_key = {Text("b")};
  del_partition.delete_partition = true;
  ASSERT_TRUE(db->Apply(del_partition).ok());
  EXPECT_TRUE(Clusterings(db.db(), t, "b").empty());
  // A write that arrives later but carries an older timestamp stays deleted;
  // a newer one lives.
  Mutation late = InsertRow(t, {Text("b")}, {Int(1)}, {{"v", "late"}});
  late.timestamp_micros = 1;
  ASSERT_TRUE(db->Apply(late).ok());
  EXPECT_TRUE(Clusterings(db.db(), t, "b").empty());
  ASSERT_TRUE(db->Apply(InsertRow(t, {Text("b")}, {Int(2)}, {{"v", "new"}})).ok());
  EXPECT_EQ(Clusterings(db.db(), t, "b"), (std::vector<int64_t>{2}));
  auto scan = db->ScanRange(t, RangeRequest{WholeTableRange(*t)});
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->rows, 8u);
}

TEST(DatabaseTombstoneTest, CompactionPurgesTombstonesOnlyAfterGcGrace) {
  TestDatabase db("purge");
  auto t = Fill(db, 60);
  Mutation del_partition;
  del_partition.table = t;
  del_partition.partition_key = {Text("b")};
  del_partition.delete_partition = true;
  ASSERT_TRUE(db->Apply(del_partition).ok());
  Mutation del_rows;
  del_rows.table = t;
  del_rows.partition_key = {Text("a")};
  for (int c = 0; c < 5; ++c) del_rows.rows.push_back(RowWrite{{Int(c)}, false, false, true, {}});
  ASSERT_TRUE(db->Apply(del_rows).ok());
  EXPECT_EQ(RawKeys(db.db(), *t), 21u);  // 20 rows + b's header

  ASSERT_TRUE(db->Compact().ok());
  // Within gc_grace: b's rows are dropped (shadowed) but its partition
  // tombstone stays; a's row tombstones stay.
  EXPECT_EQ(RawKeys(db.db(), *t), 11u);
  db.AdvanceSeconds(61);
  ASSERT_TRUE(db->Compact().ok());
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_EQ(RawKeys(db.db(), *t), 5u);  // only a's 5 live rows
  EXPECT_EQ(Clusterings(db.db(), t, "a"), (std::vector<int64_t>{5, 6, 7, 8, 9}));
}

// A held range (a tablet on the move: cluster/tablet_map_sync.h) keeps its
// tombstones past gc_grace until the hold is released; other ranges purge.
TEST(DatabaseTombstoneTest, HeldRangesKeepTheirTombstonesPastGcGraceUntilReleased) {
  TestDatabase db("purge_hold");
  auto t = Fill(db, 60);
  for (const char* pk : {"a", "b"}) {
    Mutation del_rows;
    del_rows.table = t;
    del_rows.partition_key = {Text(pk)};
    for (int c = 0; c < 5; ++c) del_rows.rows.push_back(RowWrite{{Int(c)}, false, false, true, {}});
    ASSERT_TRUE(db->Apply(del_rows).ok());
  }
  // Hold partition a's keys only: [position of a, position of b).
  std::string a, b;
  Token token;
  ASSERT_TRUE(EncodePartitionPosition(*t, {std::string_view(Text("a"))}, &a, &token).ok());
  ASSERT_TRUE(EncodePartitionPosition(*t, {std::string_view(Text("b"))}, &b, &token).ok());
  TableRegistry& registry = db->engine()->registry();
  registry.SetPurgeHolds("migration", t->id, {{a, b}});
  EXPECT_EQ(registry.held_ranges(), 1u);
  db.AdvanceSeconds(61);
  ASSERT_TRUE(db->Compact().ok());
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_EQ(RawKeys(db.db(), *t), 15u);  // a: 10 (5 tombstones held), b: 5 live
  registry.SetPurgeHolds("migration", t->id, {});
  EXPECT_EQ(registry.held_ranges(), 0u);
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_EQ(RawKeys(db.db(), *t), 10u);
  EXPECT_EQ(Clusterings(db.db(), t, "a"), (std::vector<int64_t>{5, 6, 7, 8, 9}));
}

TEST(DatabaseTombstoneTest, CompactionDropsExpiredTtlData) {
  TestDatabase db("ttl_purge");
  auto t = MakeTable(db.db(), "t", Distribution::kRange, {"k:text:pk", "c:int:ck", "v:text:regular"});
  TableSchema g = *t;
  g.options.gc_grace_seconds = 0;
  t = *db->AlterTable(g);
  for (int c = 0; c < 10; ++c) {
    Mutation m = InsertRow(t, {Text("k")}, {Int(c)}, {{"v", "x"}});
    m.ttl_seconds = c < 5 ? 30 : 0;
    ASSERT_TRUE(db->Apply(m).ok());
  }
  db.AdvanceSeconds(31);
  EXPECT_EQ(Clusterings(db.db(), t, "k").size(), 5u);
  ASSERT_TRUE(db->Compact().ok());
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_EQ(RawKeys(db.db(), *t), 5u);
}

}  // namespace
}  // namespace tessera
