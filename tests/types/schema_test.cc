#include <gtest/gtest.h>

#include "types/schema.h"
#include "types/schema_json.h"

namespace tessera {
namespace {

TableSchema Sample() {
  TableSchema t;
  t.keyspace = "ks";
  t.name = "events";
  t.id = 7;
  t.uuid = std::string(16, '\x42');
  t.distribution = Distribution::kRange;
  t.options.default_time_to_live = 3600;
  t.options.comment = "seed 002 order events";
  t.options.extra["compaction"] = "{'class': 'LeveledCompactionStrategy'}";
  t.columns = {{0, "order_id", *CqlType::Parse("text"), ColumnKind::kPartitionKey, SortOrder::kAsc},
               {1, "ts", *CqlType::Parse("timestamp"), ColumnKind::kClustering, SortOrder::kDesc},
               {2, "owner", *CqlType::Parse("text"), ColumnKind::kStatic, SortOrder::kAsc},
               {3, "tags", *CqlType::Parse("set<text>"), ColumnKind::kRegular, SortOrder::kAsc}};
  return t;
}

TEST(SchemaTest, JsonRoundTripKeepsEverything) {
  TableSchema t = Sample();
  ASSERT_TRUE(t.Validate().ok());
  auto back = TableFromJson(TableToJson(t));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(TableToJson(*back), TableToJson(t));
  EXPECT_EQ(back->Clustering()[0]->order, SortOrder::kDesc);
  EXPECT_EQ(back->distribution, Distribution::kRange);
  EXPECT_EQ(back->FindColumn("tags")->type.ToCql(), "set<text>");
}

TEST(SchemaTest, PartitionBucketHistoriesRoundTripAndAreLookedUpByPartitionKey) {
  TableSchema t = Sample();
  t.distribution = Distribution::kHash;
  t.partition_buckets.automatic = true;
  t.partition_buckets.counts = {1};
  t.partition_buckets.partitions = {{"a", {1, 16}}, {"c", {1, 16, 32}}};
  ASSERT_TRUE(t.Validate().ok());
  auto back = TableFromJson(TableToJson(t));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(TableToJson(*back), TableToJson(t));
  EXPECT_TRUE(back->partition_buckets.automatic);
  EXPECT_EQ(back->partition_buckets.CountsFor("c"), (std::vector<uint32_t>{1, 16, 32}));
  EXPECT_EQ(back->partition_buckets.CountsFor("b"), (std::vector<uint32_t>{1}));
  EXPECT_EQ(back->partition_buckets.SpanFor("c"), 32u);
  EXPECT_EQ(back->partition_buckets.SpanFor("zz"), 1u);
  TableSchema bad = t;
  bad.partition_buckets.partitions = {{"c", {16}}, {"a", {16}}};  // unsorted
  EXPECT_FALSE(bad.Validate().ok());
  bad = t;
  bad.partition_buckets.counts = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // more counts than a deletion writes to
  EXPECT_FALSE(bad.Validate().ok());
  bad = t;
  bad.partition_buckets.counts = {257};
  EXPECT_FALSE(bad.Validate().ok());
  bad = t;
  bad.columns.erase(bad.columns.begin() + 1, bad.columns.begin() + 3);  // no clustering columns
  EXPECT_FALSE(bad.Validate().ok());
}

TEST(SchemaTest, ValidateRejectsCassandraViolations) {
  TableSchema t = Sample();
  t.columns[3].kind = ColumnKind::kClustering;  // non-frozen set in the key
  EXPECT_FALSE(t.Validate().ok());
  t = Sample();
  t.columns.erase(t.columns.begin());  // no partition key
  EXPECT_FALSE(t.Validate().ok());
  t = Sample();
  t.columns[1].kind = ColumnKind::kRegular;  // static without clustering
  EXPECT_FALSE(t.Validate().ok());
  t = Sample();
  t.options.initial_tablets = 3;
  EXPECT_FALSE(t.Validate().ok());
  t = Sample();
  t.columns[2].name = "owner";
  t.columns[3].name = "owner";
  EXPECT_FALSE(t.Validate().ok());
}

TEST(SchemaTest, CorruptDocumentsAreErrors) {
  EXPECT_FALSE(TableFromJson("{").ok());
  EXPECT_FALSE(TableFromJson("{\"format\": 2}").ok());
  EXPECT_FALSE(KeyspaceFromJson("[]").ok());
}

}  // namespace
}  // namespace tessera
