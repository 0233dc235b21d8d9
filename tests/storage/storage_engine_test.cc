#include "storage/storage_engine.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "storage/merge_operator.h"
#include "storage/row_fragment.h"
#include "tests/storage/storage_test_util.h"

namespace tessera {
namespace {

using testing::Fragment;
using testing::TempDir;

TEST(StorageEngineTest, MergesOperandsLastWriteWinsAcrossFlushAndCompaction) {
  StorageOptions o;
  o.path = TempDir("engine");
  auto engine = StorageEngine::Open(o);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  WriteSet ws;
  ws.Merge("k", Fragment(20, "newer"));
  ASSERT_TRUE((*engine)->Write(ws).ok());
  ASSERT_TRUE((*engine)->Flush().ok());
  WriteSet late;
  late.Merge("k", Fragment(10, "older but later"));  // no read before the write
  ASSERT_TRUE((*engine)->Write(late).ok());
  for (int pass = 0; pass < 2; ++pass) {
    std::string v;
    ASSERT_TRUE((*engine)->Get("k", &v).ok());
    RowFragment r;
    ASSERT_TRUE(DecodeRowFragment(v, &r).ok());
    ASSERT_EQ(r.cells.size(), 1u);
    EXPECT_EQ(r.cells[0].value, "newer");
    ASSERT_TRUE((*engine)->Compact().ok());
  }
  std::string missing;
  EXPECT_TRUE((*engine)->Get("nope", &missing).IsNotFound());
  std::filesystem::remove_all(o.path);
}

// The operands one full merge folded in the last merge recorded after `before`:
// the highest bucket that grew (MergeOperandStats::kBucketBounds).
size_t HighestGrownBucket(const StorageStats& before, const StorageStats& after) {
  size_t highest = 0;
  for (size_t i = 0; i < after.full_merges_by_operands.size(); ++i) {
    if (after.full_merges_by_operands[i] > before.full_merges_by_operands[i]) highest = i;
  }
  return highest;
}

// Issue 32: a row updated 1,000 times in one memtable. Without a bound every
// read folds all 1,000 operands; with max_successive_merges = 16 a write folds
// the chain into a whole value whenever it reaches 16, so a read folds at most
// 16 operands above it, and the newest write still wins.
TEST(StorageEngineTest, SuccessiveMergesBoundTheOperandChainOfAHotRow) {
  for (size_t bound : {size_t{0}, size_t{16}}) {
    StorageOptions o;
    o.path = TempDir("chain_" + std::to_string(bound));
    o.max_successive_merges = bound;
    auto engine = StorageEngine::Open(o);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    for (int i = 1; i <= 1000; ++i) {
      WriteSet ws;
      ws.Merge("hot", Fragment(i, "v" + std::to_string(i)));
      ASSERT_TRUE((*engine)->Write(ws).ok());
    }
    const StorageStats before = (*engine)->Stats();
    std::string v;
    ASSERT_TRUE((*engine)->Get("hot", &v).ok());
    const StorageStats after = (*engine)->Stats();
    EXPECT_EQ(after.full_merges, before.full_merges + 1);
    RowFragment r;
    ASSERT_TRUE(DecodeRowFragment(v, &r).ok());
    ASSERT_EQ(r.cells.size(), 1u);
    EXPECT_EQ(r.cells[0].value, "v1000");
    if (bound == 0) {
      EXPECT_EQ(after.merge_operands - before.merge_operands, 1000u);
      EXPECT_EQ(HighestGrownBucket(before, after), MergeOperandStats::kBuckets - 1);  // above 256
    } else {
      EXPECT_LE(after.merge_operands - before.merge_operands, 16u);
      EXPECT_LE(HighestGrownBucket(before, after), 2u);  // at most 16
    }
    engine->reset();
    std::filesystem::remove_all(o.path);
  }
}

TEST(StorageEngineTest, StatsCountLiveLogsAndCompactionDebt) {
  StorageOptions o;
  o.path = TempDir("stats");
  auto engine = StorageEngine::Open(o);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  WriteSet ws;
  ws.Merge("k", Fragment(1, std::string(1000, 'x')));
  ASSERT_TRUE((*engine)->Write(ws).ok());
  StorageStats st = (*engine)->Stats();
  EXPECT_GE(st.wal_files, 1u);
  EXPECT_GE(st.wal_bytes, 1000u);
  EXPECT_GT(st.memtable_bytes, 1000u);
  EXPECT_EQ(st.level0_files, 0u);
  EXPECT_EQ(st.immutable_memtables, 0u);
  EXPECT_EQ(st.full_merges_by_operands.size(), MergeOperandStats::kBuckets);
  engine->reset();
  std::filesystem::remove_all(o.path);
}

TEST(StorageEngineTest, MetaDocumentsPersistAcrossReopen) {
  StorageOptions o;
  o.path = TempDir("meta");
  {
    auto engine = StorageEngine::Open(o);
    ASSERT_TRUE(engine.ok());
    ASSERT_TRUE((*engine)->MetaPut("a/1", "one").ok());
    ASSERT_TRUE((*engine)->MetaPut("a/2", "two").ok());
    ASSERT_TRUE((*engine)->MetaPut("b/1", "other").ok());
  }
  auto engine = StorageEngine::Open(o);
  ASSERT_TRUE(engine.ok());
  auto docs = (*engine)->MetaScan("a/");
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[1].second, "two");
  std::filesystem::remove_all(o.path);
}

}  // namespace
}  // namespace tessera
