// Partition-bucketed tables (TableSchema::partition_buckets): sub-partition
// keys, merged reads across a count raise, reconciliation of a row written
// under two counts, deletions under every count, whole-partition deletions
// through compaction, tablet splits between sub-partitions, persistence.
#include <gtest/gtest.h>

#include <set>

#include "keys/storage_key.h"
#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

// The clustering keys of partition k with their v, through pages of `page` rows, in the given order.
std::vector<std::pair<int64_t, std::string>> Slice(Database& db, const std::shared_ptr<const TableSchema>& t,
                                                   int64_t k, size_t page, bool reversed) {
  SliceRequest req;
  req.limit = page;
  req.reversed = reversed;
  std::vector<std::pair<int64_t, std::string>> out;
  for (int pages = 0; pages < 100000; ++pages) {
    auto r = db.ReadSlice(t, {Int(k)}, req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) break;
    for (const auto& row : r->partition.rows) out.emplace_back(AsInt(row.clustering[0]), CellText(*t, row, "v"));
    if (r->next_cursor.empty()) break;
    req.cursor = r->next_cursor;
  }
  return out;
}

Mutation DeleteRow(const std::shared_ptr<const TableSchema>& t, int64_t k, int64_t c) {
  Mutation m;
  m.table = t;
  m.partition_key = {Int(k)};
  m.rows.push_back(RowWrite{{Int(c)}, false, false, true, {}});
  return m;
}

TEST(PartitionBucketsTest, KeysCarryTheSubPartitionAfterTheLogicalPosition) {
  TestDatabase db("pb_keys");
  auto t = MakePartitionBucketed(db.db(), 8, false);
  std::string logical;
  Token token;
  ASSERT_TRUE(EncodePartitionPosition(*t, {Int(7)}, &logical, &token).ok());
  std::string ck;
  ASSERT_TRUE(EncodeClusteringPrefix(*t, {Int(3)}, &ck).ok());
  const uint32_t sub = SubPartitionOf(ck, 8);
  ASSERT_LT(sub, 8u);
  const std::string key = SubPartitionPosition(logical, sub) + static_cast<char>(KeyKind::kRow) + ck;
  auto decoded = DecodeStorageKey(*t, key);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->sub_partition, sub);
  EXPECT_EQ(AsInt(decoded->partition_key[0]), 7);
  EXPECT_EQ(decoded->partition_position_size, logical.size() + 2);
  EXPECT_EQ(*PartitionPositionSize(*t, key), logical.size() + 2);
  EXPECT_EQ(*LogicalPartitionPositionSize(*t, key), logical.size());
  EXPECT_EQ(AsInt((*DecodePartitionPosition(*t, SubPartitionPosition(logical, sub)))[0]), 7);
}

TEST(PartitionBucketsTest, AnAutoRaiseKeepsEveryRowReadableUpdatableAndDeletable) {
  TestDatabase db("pb_raise");
  auto t = MakePartitionBucketed(db.db(), 1, true);
  std::map<int64_t, std::string> expected;
  for (int c = 0; c < 200; ++c) {
    ASSERT_TRUE(db->Apply(InsertRow(t, {Int(1)}, {Int(c)}, {{"v", "before"}})).ok());
    expected[c] = "before";
  }
  std::string logical;
  Token token;
  ASSERT_TRUE(EncodePartitionPosition(*t, {Int(1)}, &logical, &token).ok());
  auto raised = db->ChangePartitionBuckets(*t, logical, 16, "test");
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ((*raised)->partition_buckets.partitions.size(), 1u);
  EXPECT_EQ((*raised)->partition_buckets.CountsFor(EncodedPartitionKeyOf(**raised, logical)),
            (std::vector<uint32_t>{1, 16}));
  // Writes through the old snapshot (a prepared statement's) use the new count.
  for (int c = 200; c < 400; ++c) {
    ASSERT_TRUE(db->Apply(InsertRow(t, {Int(1)}, {Int(c)}, {{"v", "after"}})).ok());
    expected[c] = "after";
  }
  // Rows written under count 1, updated under 16: both fragments reconcile on read.
  for (int c = 0; c < 200; c += 10) {
    Mutation m;
    m.table = t;
    m.partition_key = {Int(1)};
    m.rows.push_back(RowWrite{{Int(c)}, false, false, false, {CellWrite{t->FindColumn("v")->id, Text("updated")}}});
    ASSERT_TRUE(db->Apply(m).ok());
    expected[c] = "updated";
  }
  // Rows written under count 1 (some updated under 16) deleted under 16.
  for (int c : {5, 10, 20, 250}) {
    ASSERT_TRUE(db->Apply(DeleteRow(t, 1, c)).ok());
    expected.erase(c);
  }
  std::vector<std::pair<int64_t, std::string>> ascending(expected.begin(), expected.end());
  std::vector<std::pair<int64_t, std::string>> descending(expected.rbegin(), expected.rend());
  for (int restart = 0; restart < 2; ++restart) {
    if (restart) db.Reopen();
    auto current = *db->GetTable("ks", "pb");
    for (size_t page : {1u, 7u, 5000u}) {
      EXPECT_EQ(Slice(db.db(), current, 1, page, false), ascending) << page;
      EXPECT_EQ(Slice(db.db(), current, 1, page, true), descending) << page;
    }
    for (int c : {0, 5, 30, 199, 250, 399}) {
      auto row = db->ReadRow(current, {Int(1)}, {Int(c)});
      ASSERT_TRUE(row.ok());
      EXPECT_EQ(row->has_value(), expected.count(c) == 1) << c;
      if (*row) {
        EXPECT_EQ(CellText(*current, **row, "v"), expected[c]) << c;
      }
    }
  }
}

TEST(PartitionBucketsTest, TabletsSplitBetweenSubPartitionsAndReadsStayWhole) {
  TestDatabase db("pb_split");
  auto t = MakePartitionBucketed(db.db(), 16, false);
  for (int c = 0; c < 300; ++c) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(9)}, {Int(c)}, {{"v", "x"}})).ok());
  // One partition, three tablets: cuts between its sub-partitions (and not at its logical position).
  std::string logical;
  Token token;
  ASSERT_TRUE(EncodePartitionPosition(*t, {Int(9)}, &logical, &token).ok());
  EXPECT_TRUE(db->SplitTablet(*t, db->Tablets(*t).back().id, logical, "test").status().IsInvalidArgument());
  for (uint32_t sub : {5u, 11u}) {
    auto split = db->SplitTablet(*t, db->Tablets(*t).back().id, SubPartitionPosition(logical, sub), "test");
    ASSERT_TRUE(split.ok()) << split.status().ToString();
  }
  auto tablets = db->Tablets(*t);
  ASSERT_EQ(tablets.size(), 3u);
  for (size_t page : {1u, 7u, 5000u}) {
    auto rows = Slice(db.db(), t, 9, page, false);
    ASSERT_EQ(rows.size(), 300u);
    for (int c = 0; c < 300; ++c) EXPECT_EQ(rows[c].first, c);
  }
  // Reads count on the tablets that hold the rows: the partition's reads spread too.
  size_t reading = 0;
  for (const auto& s : db->Tablets(*t)) reading += s.reads > 0;
  EXPECT_EQ(reading, 3u);
}

TEST(PartitionBucketsTest, PartitionAndRangeDeletionsCoverEverySubPartitionThroughCompaction) {
  TestDatabase db("pb_compaction");
  auto t = MakePartitionBucketed(db.db(), 8, false, /*gc_grace=*/0);
  for (int c = 0; c < 100; ++c) {
    ASSERT_TRUE(db->Apply(InsertRow(t, {Int(1)}, {Int(c)}, {{"v", "x"}})).ok());
    ASSERT_TRUE(db->Apply(InsertRow(t, {Int(2)}, {Int(c)}, {{"v", "y"}})).ok());
  }
  Mutation gone;  // DELETE FROM pb WHERE k = 1
  gone.table = t;
  gone.partition_key = {Int(1)};
  gone.delete_partition = true;
  ASSERT_TRUE(db->Apply(gone).ok());
  Mutation range;  // DELETE FROM pb WHERE k = 2 AND c >= 10 AND c < 90
  range.table = t;
  range.partition_key = {Int(2)};
  range.range_deletions.push_back({{{Int(10)}, true}, {{Int(90)}, false}});
  ASSERT_TRUE(db->Apply(range).ok());
  EXPECT_TRUE(Slice(db.db(), t, 1, 5000, false).empty());
  EXPECT_EQ(Slice(db.db(), t, 2, 5000, false).size(), 20u);
  // Past gc_grace a full compaction purges the tombstones; had it kept rows of other
  // sub-partitions while purging the header in sub-partition 0, they would come back.
  db.AdvanceSeconds(5);
  ASSERT_TRUE(db->Compact().ok());
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_TRUE(Slice(db.db(), t, 1, 5000, false).empty());
  EXPECT_EQ(Slice(db.db(), t, 2, 5000, false).size(), 20u);
  EXPECT_EQ(RawKeys(db.db(), *t), 20u);
}

TEST(PartitionBucketsTest, AutoRaisesAPartitionTheLargePartitionTrackerMeasured) {
  TestDatabase db("pb_large", TestDatabase::Configure{[](DatabaseOptions* o) {
    o->guardrails.partition_rows_warn = 100;
  }});
  auto t = MakePartitionBucketed(db.db(), 1, true);
  TabletBalancer balancer(&db.db(), BalancerOptions{});
  for (int c = 0; c < 150; ++c) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(7)}, {Int(c)}, {{"v", "x"}})).ok());
  for (int c = 0; c < 20; ++c) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(8)}, {Int(c)}, {{"v", "x"}})).ok());
  balancer.RunOnce();  // measures partition 7 (150 rows > 100) and raises it; 8 stays at 1
  auto current = *db->GetTable("ks", "pb");
  std::string seven, eight;
  Token token;
  ASSERT_TRUE(EncodePartitionPosition(*current, {Int(7)}, &seven, &token).ok());
  ASSERT_TRUE(EncodePartitionPosition(*current, {Int(8)}, &eight, &token).ok());
  EXPECT_EQ(current->partition_buckets.CountsFor(EncodedPartitionKeyOf(*current, seven)),
            (std::vector<uint32_t>{1, TabletBalancer::kFirstAutoPartitionBuckets}));
  EXPECT_EQ(current->partition_buckets.CountsFor(EncodedPartitionKeyOf(*current, eight)), (std::vector<uint32_t>{1}));
  std::string reason;
  for (const auto& e : db->TabletEvents()) {
    if (e.kind == "partition_buckets") reason = e.reason;
  }
  EXPECT_NE(reason.find("partition_buckets of partition 7 1 -> 16"), std::string::npos) << reason;
  EXPECT_NE(reason.find("a large partition: 150 rows"), std::string::npos) << reason;
  // A second round within the gap raises nothing more; the rows stay readable.
  balancer.RunOnce();
  EXPECT_EQ((*db->GetTable("ks", "pb"))->partition_buckets.CountsFor(EncodedPartitionKeyOf(*current, seven)).size(), 2u);
  for (int c = 150; c < 200; ++c) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(7)}, {Int(c)}, {{"v", "x"}})).ok());
  EXPECT_EQ(Slice(db.db(), current, 7, 13, true).size(), 200u);
}

}  // namespace
}  // namespace tessera
