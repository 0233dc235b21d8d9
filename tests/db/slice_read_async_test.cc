// Database::ReadSliceAsync (db/slice_read_async.cc) against the blocking
// ReadSlice on one node: the same pages, row for row, for every shape of
// slice a SELECT makes (bounds, direction, LIMIT, paging), over dead rows
// and range tombstones that cost it several windows, with and without a
// static row.
#include <gtest/gtest.h>

#include <optional>

#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

// What a page shows, in a form gtest compares: each row's clustering int and
// its cells' values, then the cursor.
struct Page {
  std::vector<std::pair<int64_t, std::vector<std::string>>> rows;
  std::optional<std::vector<std::string>> static_cells;
  std::string next_cursor;
  bool operator==(const Page&) const = default;
};

Page Shown(const SliceResult& r) {
  Page p;
  for (const auto& row : r.partition.rows) {
    std::vector<std::string> cells;
    for (const auto& c : row.cells) cells.push_back(c.value);
    p.rows.emplace_back(AsInt(row.clustering[0]), std::move(cells));
  }
  if (r.partition.static_row) {
    p.static_cells.emplace();
    for (const auto& c : r.partition.static_row->cells) p.static_cells->push_back(c.value);
  }
  p.next_cursor = r.next_cursor;
  return p;
}

Result<SliceResult> ReadAsync(Database& db, const std::shared_ptr<const TableSchema>& t, const std::string& pk,
                              const SliceRequest& req) {
  std::optional<Result<SliceResult>> answer;
  db.ReadSliceAsync(t, {Text(pk)}, req, kLocalConsistency, [&](Result<SliceResult> r) { answer = std::move(r); });
  // One node: the local replica answers on this thread.
  EXPECT_TRUE(answer.has_value());
  return answer ? std::move(*answer) : Result<SliceResult>(Status::Corruption("no answer"));
}

TEST(SliceReadAsyncTest, PagesEqualTheBlockingSliceReadsOverDeadRowsAndStaticRows) {
  TestDatabase db("slice_read_async");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:text:pk", "c:int:ck", "s:text:static", "v:text:regular"});
  for (int c = 0; c < 1200; ++c) {
    ASSERT_TRUE(db->Apply(InsertRow(t, {Text("p")}, {Int(c)}, {{"v", "v" + std::to_string(c)}})).ok());
  }
  Mutation deletes;  // every third row, and the rows in (300, 900]: windows of dead keys
  deletes.table = t;
  deletes.partition_key = {Text("p")};
  for (int c = 0; c < 1200; c += 3) deletes.rows.push_back(RowWrite{{Int(c)}, false, false, true, {}});
  deletes.range_deletions.push_back({{{Int(300)}, false}, {{Int(900)}, true}});
  ASSERT_TRUE(db->Apply(deletes).ok());
  for (const char* pk : {"p", "e"}) {  // "e" holds its static row alone
    Mutation st;
    st.table = t;
    st.partition_key = {Text(pk)};
    st.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("s")->id, std::string("s-") + pk}}});
    ASSERT_TRUE(db->Apply(st).ok());
  }

  const std::vector<std::pair<ClusteringBound, ClusteringBound>> bounds = {
      {{}, {}}, {{{Int(100)}, true}, {}}, {{}, {{Int(1000)}, true}}, {{{Int(250)}, false}, {{Int(950)}, false}}};
  int pages = 0, rows = 0;
  for (const char* pk : {"p", "e", "none"}) {
    for (const auto& [lower, upper] : bounds) {
      for (bool reversed : {false, true}) {
        for (size_t limit : {size_t{1}, size_t{7}, size_t{40}, size_t{600}, SIZE_MAX}) {
          SliceRequest req;
          req.lower = lower;
          req.upper = upper;
          req.reversed = reversed;
          req.limit = limit;
          for (int page = 0;; ++page) {
            ASSERT_LT(page, 2000);
            auto blocking = db->ReadSlice(t, {Text(pk)}, req);
            auto async = ReadAsync(db.db(), t, pk, req);
            ASSERT_TRUE(blocking.ok() && async.ok()) << blocking.status().ToString() << async.status().ToString();
            Page expected = Shown(*blocking);
            Page got = Shown(*async);
            // The blocking read shows the static row on the first page only;
            // the asynchronous one on every page (a SELECT shows it with every row).
            if (page > 0) {
              EXPECT_FALSE(expected.static_cells.has_value());
              auto first = db->ReadSlice(t, {Text(pk)}, SliceRequest{{}, {}, false, 0, ""});
              ASSERT_TRUE(first.ok());
              expected.static_cells = Shown(*first).static_cells;
            }
            ASSERT_EQ(got, expected) << pk << " reversed " << reversed << " limit " << limit << " page " << page;
            EXPECT_EQ(async->tombstones_scanned, blocking->tombstones_scanned);
            ++pages;
            rows += static_cast<int>(got.rows.size());
            if (blocking->next_cursor.empty()) break;
            req.cursor = blocking->next_cursor;
          }
        }
      }
    }
  }
  EXPECT_GT(rows, 5000);
  EXPECT_GT(pages, 500);
}

TEST(SliceReadAsyncTest, ErrorsAnswerThroughTheCallback) {
  TestDatabase db("slice_read_async_errors");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:text:pk", "c:int:ck", "v:text:regular"});
  SliceRequest req;
  req.cursor = "not a cursor";
  auto r = ReadAsync(db.db(), t, "p", req);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
}

// A replica of an older release answers a window without the point keys it
// carries (KeyWindowRead::keys, the partition header and static row): the
// slice then reads them on their own, so a partition deletion still hides
// the rows written before it.
class KeysIgnoringReplica : public LocalReplica {
 public:
  using LocalReplica::LocalReplica;
  void ReadWindowAsync(const KeyWindowRead& read, const RequestConsistency& consistency, WindowDone done) override {
    keyed_windows += !read.keys.empty();
    KeyWindowRead without = read;
    without.keys.clear();
    LocalReplica::ReadWindowAsync(without, consistency, std::move(done));
  }
  int keyed_windows = 0;
};

TEST(SliceReadAsyncTest, AReplicaThatIgnoresThePointKeysStillGetsTheHeaderAndStaticRowRead) {
  TestDatabase db("slice_read_async_old_replica");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:text:pk", "c:int:ck", "s:text:static", "v:text:regular"});
  for (int c = 0; c < 10; ++c) {
    Mutation m = InsertRow(t, {Text("p")}, {Int(c)}, {{"v", "old"}});
    m.timestamp_micros = 100;
    ASSERT_TRUE(db->Apply(m).ok());
  }
  Mutation gone;  // hides rows 0..9
  gone.table = t;
  gone.partition_key = {Text("p")};
  gone.delete_partition = true;
  gone.timestamp_micros = 200;
  ASSERT_TRUE(db->Apply(gone).ok());
  Mutation st = InsertRow(t, {Text("p")}, {Int(3)}, {{"v", "new"}});
  st.timestamp_micros = 300;
  st.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("s")->id, std::string("s")}}});
  ASSERT_TRUE(db->Apply(st).ok());

  const TabletMap map = TabletMap::Create(*t, 0);
  auto tablets = std::make_shared<const TabletMap>(map);
  auto replica = std::make_shared<KeysIgnoringReplica>(db->engine());
  ReadContext ctx;
  ctx.table = t;
  ctx.tablets = [tablets] { return tablets; };
  ctx.replica_of = [replica](const Tablet&) -> std::shared_ptr<Replica> { return replica; };
  ctx.now_micros = db->NowMicros();
  for (bool reversed : {false, true}) {
    SliceRequest req;
    req.reversed = reversed;
    std::optional<Result<SliceResult>> answer;
    ReadSliceAsync(ctx, {Text("p")}, req, [&](Result<SliceResult> r) { answer = std::move(r); });
    ASSERT_TRUE(answer.has_value());
    ASSERT_TRUE(answer->ok()) << answer->status().ToString();
    auto expected = db->ReadSlice(t, {Text("p")}, req);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    EXPECT_EQ(Shown(**answer), Shown(*expected));
    ASSERT_EQ((*answer)->partition.rows.size(), 1u);
    EXPECT_EQ(AsInt((*answer)->partition.rows[0].clustering[0]), 3);
    ASSERT_TRUE((*answer)->partition.static_row.has_value());
  }
  EXPECT_EQ(replica->keyed_windows, 2);  // the keys were asked for, and ignored
}

}  // namespace
}  // namespace tessera
