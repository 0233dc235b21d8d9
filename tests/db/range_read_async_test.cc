// Database::ScanRangeAsync (db/range_read_async.cc) against the blocking
// ScanRange on one node: the same pages, partition for partition and row for
// row, over several tablets, for the limits and per-partition limits a
// SELECT makes, with deleted rows and partitions, static rows (some
// partitions holding nothing else) and pages resumed inside a partition;
// and a bucketed table's merged scan.
#include <gtest/gtest.h>

#include <optional>

#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

// What a page shows, in a form gtest compares.
struct Page {
  // (partition key, static cells, [(clustering int, cells)])
  struct Partition {
    std::string key;
    std::optional<std::vector<std::string>> static_cells;
    std::vector<std::pair<int64_t, std::vector<std::string>>> rows;
    bool operator==(const Partition&) const = default;
  };
  std::vector<Partition> partitions;
  std::string next_cursor;
  size_t rows = 0;
  uint64_t tombstones = 0;
  bool operator==(const Page&) const = default;
};

Page Shown(const RangeResult& r) {
  Page p;
  for (const auto& part : r.partitions) {
    Page::Partition q;
    q.key = part.partition_key.at(0);
    if (part.static_row) {
      q.static_cells.emplace();
      for (const auto& c : part.static_row->cells) q.static_cells->push_back(c.value);
    }
    for (const auto& row : part.rows) {
      std::vector<std::string> cells;
      for (const auto& c : row.cells) cells.push_back(c.value);
      q.rows.emplace_back(AsInt(row.clustering[0]), std::move(cells));
    }
    p.partitions.push_back(std::move(q));
  }
  p.next_cursor = r.next_cursor;
  p.rows = r.rows;
  p.tombstones = r.tombstones_scanned;
  return p;
}

Result<RangeResult> ScanAsync(Database& db, const std::shared_ptr<const TableSchema>& t, const RangeRequest& req) {
  std::optional<Result<RangeResult>> answer;
  db.ScanRangeAsync(t, req, kLocalConsistency, [&](Result<RangeResult> r) { answer = std::move(r); });
  // One node: the local replica answers on this thread.
  EXPECT_TRUE(answer.has_value());
  return answer ? std::move(*answer) : Result<RangeResult>(Status::Corruption("no answer"));
}

TEST(RangeReadAsyncTest, PagesEqualTheBlockingScanOverTabletsDeadRowsAndStaticRows) {
  TestDatabase db("range_read_async");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:text:pk", "c:int:ck", "s:text:static", "v:text:regular"});
  for (int k = 0; k < 60; ++k) {
    const std::string pk = "p" + std::to_string(k);
    for (int c = 0; c < k % 13 * 9; ++c) {
      ASSERT_TRUE(db->Apply(InsertRow(t, {Text(pk)}, {Int(c)}, {{"v", pk + "/" + std::to_string(c)}})).ok());
    }
    Mutation m;
    m.table = t;
    m.partition_key = {Text(pk)};
    if (k % 5 == 0) {  // a static row (alone where the partition has no rows)
      m.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("s")->id, "s-" + pk}}});
    }
    if (k % 7 == 3) {  // every other row deleted, and a range of them
      for (int c = 0; c < 100; c += 2) m.rows.push_back(RowWrite{{Int(c)}, false, false, true, {}});
      m.range_deletions.push_back({{{Int(20)}, false}, {{Int(40)}, true}});
    }
    if (k % 11 == 4) m.delete_partition = true;  // the whole partition
    if (!m.rows.empty() || !m.range_deletions.empty() || m.delete_partition) {
      ASSERT_TRUE(db->Apply(m).ok());
    }
  }
  // Several tablets, so that a page crosses their segments.
  for (int i = 0; i < 3; ++i) {
    auto tablets = db->Tablets(*t);
    ASSERT_TRUE(db->SplitTablet(*t, tablets.back().id).ok());
    ASSERT_TRUE(db->SplitTablet(*t, tablets.front().id).ok());
  }
  const auto tablets = db->TabletRanges(*t);
  ASSERT_GE(tablets.size(), 6u);
  const std::vector<KeyRange> ranges = {WholeTableRange(*t), {tablets[1].start, tablets[4].end}};
  int pages = 0;
  size_t rows = 0;
  for (const auto& range : ranges) {
    for (size_t limit : {size_t{1}, size_t{7}, size_t{50}, size_t{500}, SIZE_MAX}) {
      for (size_t per_partition : {SIZE_MAX, size_t{3}}) {
        RangeRequest req{range, limit, per_partition, ""};
        for (int page = 0;; ++page) {
          ASSERT_LT(page, 5000);
          auto blocking = db->ScanRange(t, req);
          auto async = ScanAsync(db.db(), t, req);
          ASSERT_TRUE(blocking.ok() && async.ok()) << blocking.status().ToString() << async.status().ToString();
          ASSERT_EQ(Shown(*async), Shown(*blocking)) << "limit " << limit << " per partition " << per_partition
                                                     << " page " << page;
          ++pages;
          rows += async->rows;
          if (blocking->next_cursor.empty()) break;
          req.cursor = blocking->next_cursor;
        }
      }
    }
  }
  EXPECT_GT(rows, 5000u);
  EXPECT_GT(pages, 1000);
}

// A bucketed table (TableSchema::buckets) scans every bucket at once and
// merges them (ScanBucketsAsync): the same pages as the blocking scan, which
// reads the buckets one after the other, across a bucket-count change (two
// versions), with static rows, static-only partitions and deleted rows.
TEST(RangeReadAsyncTest, ABucketedTablesPagesEqualTheBlockingScan) {
  TestDatabase db("range_read_async_buckets");
  auto plain = MakeTable(db.db(), "t", Distribution::kRange, {"k:int:pk", "c:int:ck", "s:text:static", "v:text:regular"}, 1);
  TableSchema schema = *plain;
  ASSERT_TRUE(db->DropTable("ks", "t").ok());
  schema.id = 0;
  schema.name = "b";
  schema.buckets.versions = {BucketVersion{"", 4}};
  auto created = db->CreateTable(schema);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto t = *created;
  auto write = [&](const std::shared_ptr<const TableSchema>& table, int from, int to) {
    for (int k = from; k < to; ++k) {
      Mutation m;
      m.table = table;
      m.partition_key = {Int(k)};
      if (k % 5 == 0) m.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("s")->id, Text("s" + std::to_string(k))}}});
      if (k % 11 != 3) {  // static-only partitions
        for (int c = 0; c < 4; ++c) {
          m.rows.push_back(RowWrite{{Int(c)}, false, true, false,
                                    {CellWrite{t->FindColumn("v")->id, Text(std::to_string(k * 10 + c))}}});
        }
      }
      ASSERT_TRUE(db->Apply(m).ok());
      if (k % 3 == 0) {  // a deleted row
        Mutation d;
        d.table = table;
        d.partition_key = {Int(k)};
        d.rows.push_back(RowWrite{{Int(2)}, false, false, true, {}});
        ASSERT_TRUE(db->Apply(d).ok());
      }
    }
  };
  write(t, 0, 120);
  auto changed = db->ChangeBucketCount(*t, 8, "test");
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  t = *changed;
  write(t, 120, 200);
  std::vector<std::string> lo{Int(30)}, hi{Int(150)};
  auto key_range = PartitionKeyRange(*t, &lo, true, &hi, false);
  ASSERT_TRUE(key_range.ok());
  int pages = 0;
  size_t rows = 0;
  for (const KeyRange& range : {WholeTableRange(*t), *key_range}) {
    for (size_t limit : {size_t{1}, size_t{7}, size_t{40}, size_t{1000}}) {
      for (size_t per_partition : {SIZE_MAX, size_t{2}}) {
        RangeRequest req{range, limit, per_partition, ""};
        for (int page = 0;; ++page) {
          ASSERT_LT(page, 5000);
          auto blocking = db->ScanRange(t, req);
          auto async = ScanAsync(db.db(), t, req);
          ASSERT_TRUE(blocking.ok() && async.ok()) << blocking.status().ToString() << async.status().ToString();
          ASSERT_EQ(Shown(*async), Shown(*blocking)) << "limit " << limit << " per partition " << per_partition
                                                     << " page " << page;
          ++pages;
          rows += async->rows;
          if (blocking->next_cursor.empty()) break;
          req.cursor = blocking->next_cursor;
        }
      }
    }
  }
  EXPECT_GT(rows, 2000u);
  EXPECT_GT(pages, 500);
}

TEST(RangeReadAsyncTest, ErrorsAnswerThroughTheCallback) {
  TestDatabase db("range_read_async_errors");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:text:pk", "c:int:ck", "v:text:regular"});
  RangeRequest req{WholeTableRange(*t), 10, SIZE_MAX, "not a cursor"};
  auto r = ScanAsync(db.db(), t, req);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
}

}  // namespace
}  // namespace tessera
