#include "server/metrics_text.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "db/database.h"
#include "tests/db/test_util.h"

namespace tessera::server {
namespace {

using testing::InsertRow;
using testing::Int;
using testing::MakeTable;
using testing::TestDatabase;

// The value of the one sample line starting with `prefix` (name and labels), or -1.
double Sample(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix + " ", 0) == 0) return std::stod(line.substr(prefix.size() + 1));
  }
  return -1;
}

TEST(MetricsTextTest, ExposesTabletsTablesAndLatencyHistogramsInPrometheusFormat) {
  TestDatabase db("metrics_text");
  auto t = MakeTable(db.db(), "m", Distribution::kRange, {"k:int:pk", "v:text:regular"});
  // 1 KB values: each half of the split spans several SST blocks.
  for (int k = 0; k < 100; ++k) {
    ASSERT_TRUE(db->Apply(InsertRow(t, {Int(k)}, {}, {{"v", std::string(1000, 'x')}})).ok());
  }
  for (int k = 0; k < 10; ++k) ASSERT_TRUE(db->ReadRow(t, {Int(k)}, {}).ok());
  // On disk, where RocksDB's size estimate is exact to a block: for a small
  // range still in a memtable it can be 0 (seen once in CI for one half).
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_TRUE(db->SplitTablet(*t, db->Tablets(*t)[0].id).ok());
  // Requests served as a replica (a cluster's internode path) count per table.
  const std::string first_key = db->Tablets(*t)[0].start;
  db->CountReplicaRequest(t->id, first_key, /*write=*/true);
  db->CountReplicaRequest(t->id, first_key, /*write=*/true);
  db->CountReplicaRequest(t->id, first_key, /*write=*/false);
  const std::string text = RenderMetrics(db.db());

  const std::string table = R"({keyspace="ks",table="m"})";
  EXPECT_EQ(Sample(text, "tessera_tables"), 1);
  EXPECT_EQ(Sample(text, "tessera_table_tablets" + table), 2);
  EXPECT_EQ(Sample(text, "tessera_table_splits_total" + table), 1);
  EXPECT_EQ(Sample(text, "tessera_table_merges_total" + table), 0);
  EXPECT_EQ(Sample(text, "tessera_table_replica_writes_total" + table), 2);
  EXPECT_EQ(Sample(text, "tessera_table_replica_reads_total" + table), 1);
  EXPECT_EQ(Sample(text, "tessera_table_write_latency_seconds_count" + table), 100);
  EXPECT_EQ(Sample(text, "tessera_table_read_latency_seconds_count" + table), 10);
  EXPECT_EQ(Sample(text, R"(tessera_table_write_latency_seconds_bucket{keyspace="ks",table="m",le="+Inf"})"), 100);
  EXPECT_GT(Sample(text, "tessera_table_write_latency_seconds_sum" + table), 0);
  // One sample per tablet; the split tablets start counting at zero.
  const auto tablets = db->Tablets(*t);
  for (const auto& s : tablets) {
    const std::string labels = R"({keyspace="ks",table="m",tablet=")" + std::to_string(s.id) + "\"}";
    EXPECT_EQ(Sample(text, "tessera_tablet_writes_total" + labels), 0);
    EXPECT_GT(Sample(text, "tessera_tablet_size_bytes" + labels), 0);
  }
  // Every metric has HELP and TYPE once, before its samples; every sample line parses.
  const std::regex sample(R"(^[a-z_][a-z0-9_]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [-0-9.e+]+$)");
  std::istringstream in(text);
  std::string line, last_type;
  size_t types = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      ++types;
      last_type = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    EXPECT_EQ(line.rfind(last_type, 0), 0u) << line << " under " << last_type;
  }
  EXPECT_EQ(types, 34u);
  // The storage engine's gauges and its merge-operand histogram (issue 32).
  EXPECT_GE(Sample(text, "tessera_storage_wal_files"), 1);
  EXPECT_EQ(Sample(text, "tessera_storage_commitlog_sync{mode=\"periodic\"}"), 1);
  EXPECT_GE(Sample(text, "tessera_storage_pending_compaction_bytes"), 0);
  EXPECT_GT(Sample(text, "tessera_storage_block_cache_capacity_bytes"), 0);
  EXPECT_GE(Sample(text, "tessera_storage_block_cache_misses_total{block=\"data\"}"), 0);
  EXPECT_GE(Sample(text, "tessera_storage_bloom_filter_total{outcome=\"useful\"}"), 0);
  EXPECT_EQ(Sample(text, "tessera_storage_merge_operands_bucket{le=\"+Inf\"}"),
            Sample(text, "tessera_storage_merge_operands_count"));
  // No tablet is on the move on a single node: no range's tombstones are held.
  EXPECT_NE(text.find("\ntessera_tombstone_purge_held_ranges 0\n"), std::string::npos);
}

}  // namespace
}  // namespace tessera::server
