// The asynchronous reads of a partition-bucketed table
// (db/sub_partition_read_async.cc) against the blocking ones
// (db/sub_partition_read.cc): the same rows, cursors and tombstone counts for
// every shape of slice a SELECT makes (bounds, one whole row, direction,
// LIMIT, paging), for point reads and for scans' pages, over rows written under two counts of
// the partition's history, updated, deleted and range-deleted, on a
// partition split over three tablets; with the local replica (answers on the
// asking thread, so a read of many windows runs as a loop) and with one that
// answers every asynchronous read on threads of its own, as a remote replica's
// answers arrive.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include "db/reader.h"
#include "db/sub_partition_read.h"
#include "keys/storage_key.h"
#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

// A local replica whose MultiGetAsync and ReadWindowAsync read and answer on
// one of two threads of its own (in the order asked), never on the caller's.
class ElsewhereReplica : public LocalReplica {
 public:
  explicit ElsewhereReplica(StorageEngine* engine) : LocalReplica(engine) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { Serve(); });
  }
  ~ElsewhereReplica() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void MultiGetAsync(std::vector<std::string> keys, const RequestConsistency& consistency, MultiGetDone done) override {
    Post([this, keys = std::move(keys), consistency, done = std::move(done)]() mutable {
      LocalReplica::MultiGetAsync(std::move(keys), consistency, std::move(done));
    });
  }
  void ReadWindowAsync(const KeyWindowRead& read, const RequestConsistency& consistency, WindowDone done) override {
    Post([this, read, consistency, done = std::move(done)]() mutable {
      LocalReplica::ReadWindowAsync(read, consistency, std::move(done));
    });
  }
  int asked() const { return asked_; }

 private:
  void Post(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(work));
      ++asked_;
    }
    cv_.notify_one();
  }
  void Serve() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  int asked_ = 0;
  std::vector<std::thread> threads_;
};

// What a page shows, in a form gtest compares.
struct Page {
  std::vector<std::pair<int64_t, std::vector<std::string>>> rows;
  std::optional<std::vector<std::string>> static_cells;
  std::string next_cursor;
  uint64_t tombstones = 0;
  bool operator==(const Page&) const = default;
};

std::vector<std::string> CellValues(const RowResult& row) {
  std::vector<std::string> cells;
  for (const auto& c : row.cells) cells.push_back(c.value);
  return cells;
}

Page Shown(const SliceResult& r) {
  Page p;
  for (const auto& row : r.partition.rows) p.rows.emplace_back(AsInt(row.clustering[0]), CellValues(row));
  if (r.partition.static_row) p.static_cells = CellValues(*r.partition.static_row);
  p.next_cursor = r.next_cursor;
  p.tombstones = r.tombstones_scanned;
  return p;
}

// Waits (with a deadline) for the one answer of an asynchronous read.
template <typename T>
Result<T> Await(const std::function<void(std::function<void(Result<T>)>)>& read) {
  auto answered = std::make_shared<std::promise<Result<T>>>();
  auto future = answered->get_future();
  auto calls = std::make_shared<std::atomic<int>>(0);
  read([answered, calls](Result<T> r) {
    if (calls->fetch_add(1) == 0) answered->set_value(std::move(r));
  });
  if (future.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "no answer within 30 s";
    return Status::IOError("no answer");
  }
  Result<T> r = future.get();
  EXPECT_EQ(calls->load(), 1) << "answered more than once";
  return r;
}

class SubPartitionReadAsyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = MakePartitionBucketed(db_.db(), 1, true);
    // Partition 1: rows 0..199 under count 1, 200..399 under 16, rows of the
    // first half updated under 16 (two fragments to reconcile), rows deleted
    // under 16, a range deleted, a static row; split over three tablets
    // between its sub-partitions.
    for (int c = 0; c < 200; ++c) ASSERT_TRUE(db_->Apply(InsertRow(t, {Int(1)}, {Int(c)}, {{"v", "before"}})).ok());
    for (int c = 0; c < 50; ++c) ASSERT_TRUE(db_->Apply(InsertRow(t, {Int(2)}, {Int(c)}, {{"v", "two"}})).ok());
    std::string logical;
    Token token;
    ASSERT_TRUE(EncodePartitionPosition(*t, {Int(1)}, &logical, &token).ok());
    ASSERT_TRUE(db_->ChangePartitionBuckets(*t, logical, 16, "test").ok());
    for (int c = 200; c < 400; ++c) ASSERT_TRUE(db_->Apply(InsertRow(t, {Int(1)}, {Int(c)}, {{"v", "after"}})).ok());
    Mutation m;
    m.table = t;
    m.partition_key = {Int(1)};
    for (int c = 0; c < 200; c += 10) {
      m.rows.push_back(RowWrite{{Int(c)}, false, false, false, {CellWrite{t->FindColumn("v")->id, Text("updated")}}});
    }
    for (int c : {5, 10, 20, 250}) m.rows.push_back(RowWrite{{Int(c)}, false, false, true, {}});
    m.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("s")->id, Text("static one")}}});
    m.range_deletions.push_back({{{Int(300)}, true}, {{Int(320)}, false}});
    ASSERT_TRUE(db_->Apply(m).ok());
    Mutation only_static;  // partition 3: its static row alone
    only_static.table = t;
    only_static.partition_key = {Int(3)};
    only_static.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{t->FindColumn("s")->id, Text("three")}}});
    ASSERT_TRUE(db_->Apply(only_static).ok());
    for (uint32_t sub : {5u, 11u}) {
      ASSERT_TRUE(db_->SplitTablet(*t, db_->Tablets(*t).back().id, SubPartitionPosition(logical, sub), "test").ok());
    }
    ASSERT_EQ(db_->Tablets(*t).size(), 3u);
    table_ = *db_->GetTable("ks", "pb");
    elsewhere_ = std::make_shared<ElsewhereReplica>(db_->engine());
  }

  ReadContext Context(bool elsewhere) {
    ReadContext ctx = db_->MakeReadContext(db_->CurrentLayout(table_), kLocalConsistency);
    if (elsewhere) ctx.replica_of = [r = elsewhere_](const Tablet&) -> std::shared_ptr<Replica> { return r; };
    return ctx;
  }

  TestDatabase db_{"sub_partition_read_async"};
  std::shared_ptr<const TableSchema> table_;
  std::shared_ptr<ElsewhereReplica> elsewhere_;
};

TEST_F(SubPartitionReadAsyncTest, SlicesEqualTheBlockingSlices) {
  const std::vector<std::pair<ClusteringBound, ClusteringBound>> bounds = {
      {{}, {}},
      {{{Int(30)}, true}, {}},
      {{}, {{Int(250)}, true}},
      {{{Int(25)}, false}, {{Int(305)}, false}},
      {{{Int(30)}, true}, {{Int(30)}, true}},    // one whole row: the sub-partitions of its counts only
      {{{Int(210)}, true}, {{Int(210)}, true}},
      {{{Int(5)}, true}, {{Int(5)}, true}},      // a deleted row
  };
  int pages = 0, rows = 0;
  for (bool elsewhere : {false, true}) {
    for (int k : {1, 2, 3, 4}) {
      for (const auto& [lower, upper] : bounds) {
        for (bool reversed : {false, true}) {
          for (size_t limit : {size_t{1}, size_t{7}, size_t{40}, SIZE_MAX}) {
            SliceRequest req{lower, upper, reversed, limit, ""};
            std::optional<std::vector<std::string>> first_static;
            for (int page = 0;; ++page) {
              ASSERT_LT(page, 1000);
              auto blocking = db_->ReadSlice(table_, {Int(k)}, req);
              auto async = Await<SliceResult>([&](SliceDone done) {
                ReadSubPartitionedSliceAsync(Context(elsewhere), {Int(k)}, req, std::move(done));
              });
              ASSERT_TRUE(blocking.ok() && async.ok()) << blocking.status().ToString() << async.status().ToString();
              Page expected = Shown(*blocking);
              // The blocking slice shows the static row on its first page only,
              // the asynchronous one on every page (as ReadSliceAsync).
              if (page == 0) first_static = expected.static_cells;
              expected.static_cells = first_static;
              const std::string where = "k " + std::to_string(k) + " elsewhere " + std::to_string(elsewhere) +
                                        " reversed " + std::to_string(reversed) + " limit " + std::to_string(limit) +
                                        " page " + std::to_string(page);
              ASSERT_EQ(Shown(*async), expected) << where;
              ASSERT_EQ(async->row_keys.size(), async->partition.rows.size()) << where;
              if (!async->next_cursor.empty()) {  // a cut at the last row key gives the same cursor
                EXPECT_EQ(EncodePagingCursor(async->row_keys.size(), async->row_keys.back()), async->next_cursor) << where;
              }
              ++pages;
              rows += static_cast<int>(async->partition.rows.size());
              if (blocking->next_cursor.empty()) break;
              req.cursor = blocking->next_cursor;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(rows, 8000);
  EXPECT_GT(pages, 2000);
  EXPECT_GT(elsewhere_->asked(), pages);  // the second half asked the replica of its own threads
}

TEST_F(SubPartitionReadAsyncTest, RowsEqualTheBlockingRows) {
  int found = 0;
  for (bool elsewhere : {false, true}) {
    for (int k : {1, 2, 3, 4}) {
      for (int c : {0, 5, 10, 30, 49, 199, 200, 250, 310, 399, 400}) {
        auto blocking = db_->ReadRow(table_, {Int(k)}, {Int(c)});
        auto async = Await<std::optional<RowResult>>([&](RowDone done) {
          ReadSubPartitionedRowAsync(Context(elsewhere), {Int(k)}, {Int(c)}, std::move(done));
        });
        ASSERT_TRUE(blocking.ok() && async.ok()) << blocking.status().ToString() << async.status().ToString();
        ASSERT_EQ(async->has_value(), blocking->has_value()) << k << " " << c;
        if (!*async) continue;
        EXPECT_EQ(CellValues(**async), CellValues(**blocking)) << k << " " << c;
        ++found;
      }
    }
  }
  // Partition 1 holds 0, 30, 49, 199, 200, 399 (5, 10, 250 and 310 are deleted); 2 holds 0, 5, 10, 30, 49.
  EXPECT_EQ(found, 2 * 11);
  auto updated = Await<std::optional<RowResult>>(
      [&](RowDone done) { ReadSubPartitionedRowAsync(Context(true), {Int(1)}, {Int(30)}, std::move(done)); });
  ASSERT_TRUE(updated.ok() && updated->has_value());
  EXPECT_EQ(CellText(*table_, **updated, "v"), "updated");  // the fragment under 16 won
}

// What a scan's page shows: each partition's key, static cells and rows.
struct ScanPage {
  struct Partition {
    int64_t k = 0;
    std::optional<std::vector<std::string>> static_cells;
    std::vector<std::pair<int64_t, std::vector<std::string>>> rows;
    bool operator==(const Partition&) const = default;
  };
  std::vector<Partition> partitions;
  std::string next_cursor;
  size_t rows = 0;
  uint64_t tombstones = 0;
  bool operator==(const ScanPage&) const = default;
};

ScanPage ShownScan(const RangeResult& r) {
  ScanPage p;
  for (const auto& part : r.partitions) {
    ScanPage::Partition q;
    q.k = AsInt(part.partition_key.at(0));
    if (part.static_row) q.static_cells = CellValues(*part.static_row);
    for (const auto& row : part.rows) q.rows.emplace_back(AsInt(row.clustering[0]), CellValues(row));
    p.partitions.push_back(std::move(q));
  }
  p.next_cursor = r.next_cursor;
  p.rows = r.rows;
  p.tombstones = r.tombstones_scanned;
  return p;
}

TEST_F(SubPartitionReadAsyncTest, ScansEqualTheBlockingScans) {
  // More partitions, some holding a static row alone, so that pages cross
  // partitions and tablets.
  for (int k = 10; k < 40; ++k) {
    Mutation m;
    m.table = table_;
    m.partition_key = {Int(k)};
    if (k % 4 == 0) m.rows.push_back(RowWrite{{}, true, false, false, {CellWrite{table_->FindColumn("s")->id, Text("s")}}});
    for (int c = 0; c < (k % 5 == 0 ? 0 : k % 7 + 1); ++c) {
      m.rows.push_back(RowWrite{{Int(c)}, false, true, false, {CellWrite{table_->FindColumn("v")->id, Text("x")}}});
    }
    if (!m.rows.empty()) {
      ASSERT_TRUE(db_->Apply(m).ok());
    }
  }
  const KeyRange whole = WholeTableRange(*table_);
  const KeyRange upper = TokenRange(*table_, 0, false, INT64_MAX, true);
  int pages = 0;
  size_t rows = 0;
  for (bool elsewhere : {false, true}) {
    for (const KeyRange& range : {whole, upper}) {
      for (size_t limit : {size_t{1}, size_t{7}, size_t{40}, size_t{1000}}) {
        for (size_t per_partition : {SIZE_MAX, size_t{3}}) {
          RangeRequest req{range, limit, per_partition, ""};
          for (int page = 0;; ++page) {
            ASSERT_LT(page, 2000);
            auto blocking = db_->ScanRange(table_, req);
            auto async = Await<RangeResult>(
                [&](RangeDone done) { ScanSubPartitionedAsync(Context(elsewhere), req, std::move(done)); });
            ASSERT_TRUE(blocking.ok() && async.ok()) << blocking.status().ToString() << async.status().ToString();
            ScanPage expected = ShownScan(*blocking);
            // The blocking scan leaves the static row of the partition a page
            // resumes inside to its caller; the asynchronous one brings it.
            if (!req.cursor.empty() && !expected.partitions.empty() && !expected.partitions[0].static_cells) {
              auto first = db_->ReadSlice(table_, {Int(expected.partitions[0].k)}, SliceRequest{{}, {}, false, 0, ""});
              ASSERT_TRUE(first.ok());
              if (first->partition.static_row) expected.partitions[0].static_cells = CellValues(*first->partition.static_row);
            }
            ASSERT_EQ(ShownScan(*async), expected) << "elsewhere " << elsewhere << " limit " << limit
                                                   << " per partition " << per_partition << " page " << page;
            ++pages;
            rows += async->rows;
            if (blocking->next_cursor.empty()) break;
            req.cursor = blocking->next_cursor;
          }
        }
      }
    }
  }
  EXPECT_GT(rows, 3000u);
  EXPECT_GT(pages, 1000);
}

TEST_F(SubPartitionReadAsyncTest, ErrorsAnswerThroughTheCallback) {
  for (bool elsewhere : {false, true}) {
    SliceRequest req;
    req.cursor = "not a cursor";
    auto slice = Await<SliceResult>(
        [&](SliceDone done) { ReadSubPartitionedSliceAsync(Context(elsewhere), {Int(1)}, req, std::move(done)); });
    ASSERT_FALSE(slice.ok());
    EXPECT_TRUE(slice.status().IsInvalidArgument()) << slice.status().ToString();
    auto row = Await<std::optional<RowResult>>(
        [&](RowDone done) { ReadSubPartitionedRowAsync(Context(elsewhere), {Int(1)}, {}, std::move(done)); });
    ASSERT_FALSE(row.ok());
    EXPECT_TRUE(row.status().IsInvalidArgument()) << row.status().ToString();
    RangeRequest scan{WholeTableRange(*table_), 10, SIZE_MAX, "not a cursor"};
    auto page = Await<RangeResult>(
        [&](RangeDone done) { ScanSubPartitionedAsync(Context(elsewhere), scan, std::move(done)); });
    ASSERT_FALSE(page.ok());
    EXPECT_TRUE(page.status().IsInvalidArgument()) << page.status().ToString();
  }
}

}  // namespace
}  // namespace tessera
