#include <gtest/gtest.h>

#include <set>

#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

TEST(DatabasePagingTest, SlicePagesForwardAndReverseWhileWritesGoOn) {
  TestDatabase db("slice_paging");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:text:pk", "c:int:ck", "v:text:regular"});
  for (int c = 0; c < 100; c += 2) ASSERT_TRUE(db->Apply(InsertRow(t, {Text("p")}, {Int(c)}, {{"v", "x"}})).ok());
  for (bool reversed : {false, true}) {
    SliceRequest req;
    req.reversed = reversed;
    req.limit = 7;
    std::vector<int64_t> seen;
    int pages = 0;
    for (;;) {
      auto page = db->ReadSlice(t, {Text("p")}, req);
      ASSERT_TRUE(page.ok());
      for (const auto& r : page->partition.rows) seen.push_back(AsInt(r.clustering[0]));
      ++pages;
      // Between pages, odd rows appear all over the partition.
      ASSERT_TRUE(db->Apply(InsertRow(t, {Text("p")}, {Int(2 * pages * 7 + 1)}, {{"v", "new"}})).ok());
      if (page->next_cursor.empty()) break;
      req.cursor = page->next_cursor;
    }
    // Strictly ordered, no duplicates, and every even row present throughout is there.
    for (size_t i = 1; i < seen.size(); ++i) {
      if (reversed) ASSERT_GT(seen[i - 1], seen[i]);
      else ASSERT_LT(seen[i - 1], seen[i]);
    }
    std::set<int64_t> s(seen.begin(), seen.end());
    for (int c = 0; c < 100; c += 2) EXPECT_TRUE(s.count(c)) << c;
  }
}

TEST(DatabasePagingTest, RangePagesAcrossPartitionsWithPerPartitionLimit) {
  TestDatabase db("range_paging");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:int:pk", "c:int:ck", "s:text:static", "v:text:regular"});
  for (int k = 0; k < 30; ++k) {
    for (int c = 0; c < 5; ++c) ASSERT_TRUE(db->Apply(InsertRow(t, {Int(k)}, {Int(c)}, {{"v", "x"}})).ok());
  }
  Mutation st;  // a partition with only a static row
  st.table = t;
  st.partition_key = {Int(1000)};
  st.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("s")->id, "static only"}}});
  ASSERT_TRUE(db->Apply(st).ok());

  for (size_t ppl : {size_t{2}, SIZE_MAX}) {
    RangeRequest req{WholeTableRange(*t), 4, ppl, ""};
    std::map<int64_t, std::vector<int64_t>> rows;
    int static_only = 0;
    Token last_token = kMinToken;
    for (int pages = 0; pages < 200; ++pages) {
      auto page = db->ScanRange(t, req);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      EXPECT_LE(page->rows, 4u);
      for (const auto& p : page->partitions) {
        EXPECT_GE(p.token, last_token);
        last_token = p.token;
        int64_t k = AsInt(p.partition_key[0]);
        if (p.rows.empty()) static_only += p.static_row.has_value();
        for (const auto& r : p.rows) rows[k].push_back(AsInt(r.clustering[0]));
      }
      if (page->next_cursor.empty()) break;
      req.cursor = page->next_cursor;
    }
    EXPECT_EQ(rows.size(), 30u);
    EXPECT_EQ(static_only, 1);
    for (const auto& [k, cs] : rows) {
      std::vector<int64_t> expect;
      for (int c = 0; c < std::min<int>(5, static_cast<int>(std::min<size_t>(ppl, 5))); ++c) expect.push_back(c);
      EXPECT_EQ(cs, expect) << "partition " << k << " ppl " << ppl;
    }
  }
  RangeRequest bad{WholeTableRange(*t), 4, SIZE_MAX, "garbage"};
  EXPECT_TRUE(db->ScanRange(t, bad).status().IsInvalidArgument());
}

}  // namespace
}  // namespace tessera
