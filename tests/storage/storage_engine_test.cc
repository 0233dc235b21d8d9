#include "storage/storage_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

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

// Issue 32, item 4: whole-key and partition-prefix bloom filters skip the files
// without a key or partition, the block cache counts its hits, and iterators
// give the same keys whether their bounds share a partition prefix or not
// (also over keys shorter than the prefix).
TEST(StorageEngineTest, BloomFiltersSkipFilesAndIteratorsStayExact) {
  StorageOptions o;
  o.path = TempDir("filters");
  auto engine = StorageEngine::Open(o);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  // Three table files (below the level-0 compaction trigger), each with its own partitions: a 12-byte partition
  // prefix ("tableTOKEN-n") and two rows; plus short keys in every file.
  auto partition = [](int file, int p) {
    return "t001tok" + std::to_string(file) + "-" + std::to_string(100 + p).substr(1) + "/";  // 12 bytes
  };
  for (int file = 0; file < 3; ++file) {
    WriteSet ws;
    for (int p = 0; p < 50; ++p) {
      for (const char* row : {"a", "b"}) ws.Merge(partition(file, p) + row, Fragment(1, "v"));
    }
    ws.Merge("s" + std::to_string(file), Fragment(1, "short"));
    ASSERT_TRUE((*engine)->Write(ws).ok());
    ASSERT_TRUE((*engine)->Flush().ok());
  }
  EXPECT_EQ((*engine)->Stats().level0_files, 3u);
  const StorageStats before = (*engine)->Stats();
  // A partition slice: bounds share the prefix; 2 of the 3 files lack it.
  const std::string p = partition(2, 7);
  auto it = (*engine)->NewIterator(p, p + "\xff");
  std::vector<std::string> keys;
  for (it->Seek(p); it->Valid(); it->Next()) keys.emplace_back(it->key());
  EXPECT_EQ(keys, (std::vector<std::string>{p + "a", p + "b"}));
  // A point lookup of an absent key: the whole-key filters answer.
  std::string value;
  EXPECT_TRUE((*engine)->Get(partition(1, 3) + "z", &value).IsNotFound());
  EXPECT_TRUE((*engine)->Get(partition(1, 3) + "a", &value).ok());
  EXPECT_TRUE((*engine)->Get(partition(1, 3) + "b", &value).ok());  // same data block: a cache hit
  const StorageStats after = (*engine)->Stats();
  EXPECT_GE(after.prefix_checked - before.prefix_checked, 2u);
  EXPECT_GE(after.prefix_useful - before.prefix_useful, 2u);
  EXPECT_GE(after.bloom_useful - before.bloom_useful, 2u);
  EXPECT_GE(after.block_cache_data_hits - before.block_cache_data_hits, 1u);
  EXPECT_GT(after.block_cache_capacity_bytes, 0u);
  // Bounds that do not share a prefix (and short keys): every key, in order.
  auto all = (*engine)->NewIterator("", "");
  size_t n = 0;
  std::string last;
  for (all->SeekToFirst(); all->Valid(); all->Next(), ++n) {
    EXPECT_LT(last, std::string(all->key()));
    last = std::string(all->key());
  }
  EXPECT_EQ(n, 3u * 50 * 2 + 3);
  auto cross = (*engine)->NewIterator(partition(0, 10), partition(3, 0));
  n = 0;
  for (cross->SeekToFirst(); cross->Valid(); cross->Next()) ++n;
  EXPECT_EQ(n, 40u * 2 + 2 * 50 * 2);  // file 0's partitions 10-49, files 1 and 2 (no file 3)
  auto shorts = (*engine)->NewIterator("s", "t");
  n = 0;
  for (shorts->SeekToFirst(); shorts->Valid(); shorts->Next()) ++n;
  EXPECT_EQ(n, 3u);
  // A partition slice seen from its end (SeekToLast with the shared prefix).
  auto back = (*engine)->NewIterator(p, p + "\xff");
  back->SeekToLast();
  ASSERT_TRUE(back->Valid());
  EXPECT_EQ(back->key(), p + "b");
  const auto settings = (*engine)->Settings();
  EXPECT_NE(std::find(settings.begin(), settings.end(), std::make_pair(std::string("bloom_filter_prefix_bytes"),
                                                                       std::string("12"))),
            settings.end());
  it.reset();
  all.reset();
  cross.reset();
  shorts.reset();
  back.reset();
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

// RocksDB refuses a range deletion whose end sorts before its start only
// when it applies the batch to the memtable, after the log write, and then
// stops taking writes. The engine refuses such a batch before RocksDB sees
// it (whoever built it: a peer's bytes reach here through the internode
// service), applies none of its ops, and keeps taking writes.
TEST(StorageEngineTest, ARangeDeletionEndingBeforeItsStartIsRefusedAndWritesGoOn) {
  StorageOptions o;
  o.path = TempDir("backwards_range");
  auto engine = StorageEngine::Open(o);
  ASSERT_TRUE(engine.ok());
  WriteSet bad;
  bad.Merge("a", Fragment(1, "x"));
  bad.DeleteRange("m", "c");
  Status refused = (*engine)->Write(bad);
  EXPECT_TRUE(refused.IsInvalidArgument()) << refused.ToString();
  std::string v;
  EXPECT_TRUE((*engine)->Get("a", &v).IsNotFound()) << "a refused batch applied an op";
  WriteSet good;
  good.Merge("b", Fragment(2, "y"));
  good.DeleteRange("c", "c");  // empty, and allowed
  EXPECT_TRUE((*engine)->Write(good).ok());
  EXPECT_TRUE((*engine)->Get("b", &v).ok());
  std::filesystem::remove_all(o.path);
}

}  // namespace
}  // namespace tessera
