#include "storage/storage_engine.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "storage/row_fragment.h"

namespace tessera {
namespace {

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tessera_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::string Fragment(int64_t ts, std::string v) {
  RowFragment r;
  Cell c;
  c.column_id = 1;
  c.timestamp = ts;
  c.value = std::move(v);
  r.cells.push_back(c);
  std::string out;
  EncodeRowFragment(r, &out);
  return out;
}

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
