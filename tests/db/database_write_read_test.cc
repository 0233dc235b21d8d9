#include <gtest/gtest.h>

#include "tests/db/test_util.h"
#include "types/serialization.h"

namespace tessera {
namespace {

using namespace testing;

TEST(DatabaseWriteReadTest, LastWriteWinsByTimestampNotArrival) {
  TestDatabase db("lww");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:int:pk", "v:text:regular"});
  Mutation newer = InsertRow(t, {Int(1)}, {}, {{"v", "newer"}});
  newer.timestamp_micros = 2000;
  Mutation older = InsertRow(t, {Int(1)}, {}, {{"v", "older"}});
  older.timestamp_micros = 1000;
  ASSERT_TRUE(db->Apply(newer).ok());
  ASSERT_TRUE(db->Apply(older).ok());  // arrives later, loses
  auto row = db->ReadRow(t, {Int(1)}, {});
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ(CellText(*t, **row, "v"), "newer");
  EXPECT_EQ((*row)->cells[0].timestamp, 2000);  // WRITETIME
}

TEST(DatabaseWriteReadTest, RowMarkerKeepsInsertedRowsUpdatedRowsNeedCells) {
  TestDatabase db("marker");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:int:pk", "v:text:regular"});
  ASSERT_TRUE(db->Apply(InsertRow(t, {Int(1)}, {}, {{"v", "x"}})).ok());
  Mutation upd;  // UPDATE t SET v = 'y' WHERE k = 2 (no row marker)
  upd.table = t;
  upd.partition_key = {Int(2)};
  upd.rows.push_back(RowWrite{{}, false, false, false, {CellWrite{t->FindColumn("v")->id, "y"}}});
  ASSERT_TRUE(db->Apply(upd).ok());
  for (int k : {1, 2}) {  // DELETE v FROM t WHERE k = ?
    Mutation del;
    del.table = t;
    del.partition_key = {Int(k)};
    del.rows.push_back(RowWrite{{}, false, false, false, {CellWrite{t->FindColumn("v")->id, std::nullopt}}});
    ASSERT_TRUE(db->Apply(del).ok());
  }
  auto inserted = db->ReadRow(t, {Int(1)}, {});
  ASSERT_TRUE(inserted.ok());
  ASSERT_TRUE(inserted->has_value());  // INSERTed row stays, with v null
  EXPECT_EQ(CellText(*t, **inserted, "v"), "<absent>");
  auto updated = db->ReadRow(t, {Int(2)}, {});
  ASSERT_TRUE(updated.ok());
  EXPECT_FALSE(updated->has_value());  // only cells kept it alive
}

TEST(DatabaseWriteReadTest, TtlExpiresCellsAndRowsAndTableDefaultApplies) {
  TestDatabase db("ttl");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:int:pk", "v:text:regular", "w:text:regular"});
  Mutation m = InsertRow(t, {Int(1)}, {}, {{"v", "short"}});
  m.ttl_seconds = 10;
  ASSERT_TRUE(db->Apply(m).ok());
  Mutation keep;  // UPDATE ... SET w = 'long' USING TTL 100
  keep.table = t;
  keep.partition_key = {Int(1)};
  keep.ttl_seconds = 100;
  keep.rows.push_back(RowWrite{{}, false, false, false, {CellWrite{t->FindColumn("w")->id, "long"}}});
  ASSERT_TRUE(db->Apply(keep).ok());
  db.AdvanceSeconds(9);
  auto row = db->ReadRow(t, {Int(1)}, {});
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ(CellText(*t, **row, "v"), "short");
  EXPECT_EQ((*row)->cells[0].ttl, 10);
  db.AdvanceSeconds(1);
  row = db->ReadRow(t, {Int(1)}, {});
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ(CellText(*t, **row, "v"), "<absent>");
  EXPECT_EQ(CellText(*t, **row, "w"), "long");
  db.AdvanceSeconds(100);
  row = db->ReadRow(t, {Int(1)}, {});
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->has_value());

  TableSchema with_default = *t;
  with_default.options.default_time_to_live = 5;
  auto t2 = db->AlterTable(with_default);
  ASSERT_TRUE(t2.ok());
  ASSERT_TRUE(db->Apply(InsertRow(*t2, {Int(2)}, {}, {{"v", "d"}})).ok());
  db.AdvanceSeconds(5);
  row = db->ReadRow(*t2, {Int(2)}, {});
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->has_value());
}

TEST(DatabaseWriteReadTest, StaticColumnsAndCollections) {
  TestDatabase db("static_coll");
  auto t = MakeTable(db.db(), "t", Distribution::kHash,
                     {"k:int:pk", "c:int:ck", "owner:text:static", "tags:set<text>:regular"});
  Mutation m;
  m.table = t;
  m.partition_key = {Int(1)};
  m.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("owner")->id, "alice"}}});
  RowWrite r{{Int(10)}, false, true, false, {}};
  r.cells.push_back(CellWrite{t->FindColumn("tags")->id, std::nullopt, false, "", true});  // tags = {...}
  for (const char* tag : {"b", "a"}) r.cells.push_back(CellWrite{t->FindColumn("tags")->id, "", true, tag, false});
  m.rows.push_back(r);
  ASSERT_TRUE(db->Apply(m).ok());
  // tags = {'z'} replaces the set.
  Mutation replace;
  replace.table = t;
  replace.partition_key = {Int(1)};
  RowWrite r2{{Int(10)}, false, false, false, {}};
  r2.cells.push_back(CellWrite{t->FindColumn("tags")->id, std::nullopt, false, "", true});
  r2.cells.push_back(CellWrite{t->FindColumn("tags")->id, "", true, "z", false});
  replace.rows.push_back(r2);
  ASSERT_TRUE(db->Apply(replace).ok());
  auto slice = db->ReadSlice(t, {Int(1)}, SliceRequest{});
  ASSERT_TRUE(slice.ok());
  ASSERT_TRUE(slice->partition.static_row.has_value());
  EXPECT_EQ(CellText(*t, *slice->partition.static_row, "owner"), "alice");
  ASSERT_EQ(slice->partition.rows.size(), 1u);
  std::vector<std::string> tags;
  for (const auto& c : slice->partition.rows[0].cells) tags.push_back(c.path);
  EXPECT_EQ(tags, std::vector<std::string>{"z"});

  Mutation bad;  // a static cell in a clustering row
  bad.table = t;
  bad.partition_key = {Int(1)};
  bad.rows.push_back(RowWrite{{Int(1)}, false, false, false, {CellWrite{t->FindColumn("owner")->id, "x"}}});
  EXPECT_TRUE(db->Apply(bad).IsInvalidArgument());
  Mutation wrong_type = InsertRow(t, {Int(1)}, {Int(2)}, {});
  wrong_type.rows[0].cells.push_back(CellWrite{t->FindColumn("tags")->id, "", true, std::string(1, '\xff'), false});
  EXPECT_TRUE(db->Apply(wrong_type).IsInvalidArgument());  // not UTF-8
}

// Clustering (a ASC, b DESC): slices with inclusive/exclusive bounds and
// prefixes, forward and reverse.
TEST(DatabaseWriteReadTest, PartitionSlicesFollowClusteringOrderAndBounds) {
  TestDatabase db("slices");
  auto t = MakeTable(db.db(), "t", Distribution::kRange, {"k:text:pk", "a:int:ck", "b:int:ck:desc", "v:text:regular"});
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 3; ++b) {
      ASSERT_TRUE(db->Apply(InsertRow(t, {Text("p")}, {Int(a), Int(b)}, {{"v", std::to_string(a * 10 + b)}})).ok());
    }
  }
  auto run = [&](SliceRequest req) {
    std::vector<std::string> out;
    auto r = db->ReadSlice(t, {Text("p")}, req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    for (const auto& row : r->partition.rows) out.push_back(CellText(*t, row, "v"));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(run({}).size(), 15u);
  EXPECT_EQ(run({}).front(), "2");  // a=0, b DESC: 2, 1, 0
  // a >= 1 AND a < 2  (prefix bounds)
  EXPECT_EQ(run({{{Int(1)}, true}, {{Int(2)}, false}}), (V{"12", "11", "10"}));
  // (a, b) > (1, 1) AND a <= 2, in clustering order: (1,0), (2,2), (2,1), (2,0)
  EXPECT_EQ(run({{{Int(1), Int(1)}, false}, {{Int(2)}, true}}), (V{"10", "22", "21", "20"}));
  SliceRequest rev{{{Int(3)}, true}, {}, true};
  EXPECT_EQ(run(rev), (V{"40", "41", "42", "30", "31", "32"}));
  SliceRequest limited{{}, {}, false, 4};
  EXPECT_EQ(run(limited), (V{"2", "1", "0", "12"}));
  SliceRequest empty{{{Int(3)}, true}, {{Int(2)}, true}};
  EXPECT_TRUE(run(empty).empty());
}

TEST(DatabaseWriteReadTest, RangeScansFollowTokenOrderOrKeyOrder) {
  TestDatabase db("ranges");
  auto hashed = MakeTable(db.db(), "h", Distribution::kHash, {"k:int:pk", "v:text:regular"});
  auto ranged = MakeTable(db.db(), "r", Distribution::kRange, {"k:int:pk", "v:text:regular"});
  for (int k = -50; k < 50; ++k) {
    ASSERT_TRUE(db->Apply(InsertRow(hashed, {Int(k)}, {}, {{"v", "x"}})).ok());
    ASSERT_TRUE(db->Apply(InsertRow(ranged, {Int(k)}, {}, {{"v", "x"}})).ok());
  }
  auto h = db->ScanRange(hashed, RangeRequest{WholeTableRange(*hashed)});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->partitions.size(), 100u);
  for (size_t i = 1; i < h->partitions.size(); ++i) EXPECT_LT(h->partitions[i - 1].token, h->partitions[i].token);
  for (const auto& p : h->partitions) EXPECT_EQ(p.token, TokenOfPartitionKey({p.partition_key[0]}));
  auto r = db->ScanRange(ranged, RangeRequest{WholeTableRange(*ranged)});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->partitions.size(), 100u);
  for (size_t i = 0; i < r->partitions.size(); ++i) EXPECT_EQ(AsInt(r->partitions[i].partition_key[0]), -50 + int(i));
  // token(k) > t AND token(k) <= t2 over the hash table
  Token lo = h->partitions[10].token, hi = h->partitions[20].token;
  auto sub = db->ScanRange(hashed, RangeRequest{TokenRange(*hashed, lo, false, hi, true)});
  ASSERT_TRUE(sub.ok());
  ASSERT_EQ(sub->partitions.size(), 10u);
  EXPECT_EQ(sub->partitions.front().token, h->partitions[11].token);
  // k >= -5 AND k < 5 over the range table
  std::vector<std::string> from{Int(-5)}, to{Int(5)};
  auto keys = PartitionKeyRange(*ranged, &from, true, &to, false);
  ASSERT_TRUE(keys.ok());
  auto kr = db->ScanRange(ranged, RangeRequest{*keys});
  ASSERT_TRUE(kr.ok());
  EXPECT_EQ(kr->partitions.size(), 10u);
}

}  // namespace
}  // namespace tessera
