#include "keys/storage_key.h"

#include <gtest/gtest.h>

#include "types/serialization.h"

namespace tessera {
namespace {

TableSchema Table(Distribution d) {
  TableSchema t;
  t.keyspace = "ks";
  t.name = "t";
  t.id = 9;
  t.distribution = d;
  t.columns = {{0, "host", *CqlType::Parse("text"), ColumnKind::kPartitionKey, SortOrder::kAsc},
               {1, "day", *CqlType::Parse("int"), ColumnKind::kPartitionKey, SortOrder::kAsc},
               {2, "ts", *CqlType::Parse("timestamp"), ColumnKind::kClustering, SortOrder::kDesc},
               {3, "seq", *CqlType::Parse("int"), ColumnKind::kClustering, SortOrder::kAsc},
               {4, "v", *CqlType::Parse("text"), ColumnKind::kRegular, SortOrder::kAsc}};
  return t;
}

std::string S(const char* type, const Value& v) {
  std::string out;
  EXPECT_TRUE(Serialize(*CqlType::Parse(type), v, &out).ok());
  return out;
}

std::string RowKey(const TableSchema& t, const std::string& host, int day, int64_t ts, int seq) {
  std::string key;
  Token token;
  std::string h = S("text", Value::Bytes(host)), d = S("int", Value::Int(day));
  EXPECT_TRUE(EncodePartitionPosition(t, {h, d}, &key, &token).ok());
  key.push_back(static_cast<char>(KeyKind::kRow));
  std::string c1 = S("timestamp", Value::Int(ts)), c2 = S("int", Value::Int(seq));
  EXPECT_TRUE(EncodeClusteringPrefix(t, {c1, c2}, &key).ok());
  return key;
}

TEST(StorageKeyTest, RoundTripsThroughDecode) {
  for (Distribution d : {Distribution::kHash, Distribution::kRange}) {
    TableSchema t = Table(d);
    std::string key = RowKey(t, "web-01", 20261121, 1700000000000, -3);
    auto decoded = DecodeStorageKey(t, key);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(decoded->table_id, 9u);
    EXPECT_EQ(decoded->kind, KeyKind::kRow);
    EXPECT_EQ(decoded->partition_key[0], "web-01");
    EXPECT_EQ(Deserialize(*CqlType::Parse("int"), decoded->partition_key[1])->as_int(), 20261121);
    EXPECT_EQ(Deserialize(*CqlType::Parse("timestamp"), decoded->clustering[0])->as_int(), 1700000000000);
    EXPECT_EQ(Deserialize(*CqlType::Parse("int"), decoded->clustering[1])->as_int(), -3);
    auto n = PartitionPositionSize(t, key);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, decoded->partition_position_size);
    if (d == Distribution::kHash) {
      std::string h = "web-01", day = S("int", Value::Int(20261121));
      EXPECT_EQ(decoded->token, TokenOfPartitionKey({h, day}));
    }
  }
}

TEST(StorageKeyTest, RowsSortByClusteringOrderWithinAPartition) {
  TableSchema t = Table(Distribution::kRange);
  // ts DESC: newer first; seq ASC within one ts.
  EXPECT_LT(RowKey(t, "h", 1, 200, 0), RowKey(t, "h", 1, 100, 0));
  EXPECT_LT(RowKey(t, "h", 1, 100, -5), RowKey(t, "h", 1, 100, 7));
  // Range tables: partitions in key order ("h" < "h2", then day).
  EXPECT_LT(RowKey(t, "h", 2, 0, 0), RowKey(t, "h2", 1, 0, 0));
  EXPECT_LT(RowKey(t, "h", 1, 0, 0), RowKey(t, "h", 2, 0, 0));
}

TEST(StorageKeyTest, HashTablesSortPartitionsByToken) {
  TableSchema t = Table(Distribution::kHash);
  std::vector<std::pair<Token, std::string>> keys;
  for (int i = 0; i < 200; ++i) {
    std::string host = "host-" + std::to_string(i);
    std::string key = RowKey(t, host, 1, 0, 0);
    keys.emplace_back(DecodeStorageKey(t, key)->token, key);
  }
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  for (size_t i = 1; i < keys.size(); ++i) EXPECT_LE(keys[i - 1].first, keys[i].first);
}

TEST(StorageKeyTest, RejectsWrongArityAndEmptyKeys) {
  TableSchema t = Table(Distribution::kRange);
  std::string out;
  Token token;
  std::string h = "x";
  EXPECT_FALSE(EncodePartitionPosition(t, {h}, &out, &token).ok());
  TableSchema single = t;
  single.columns.erase(single.columns.begin() + 1);
  EXPECT_FALSE(EncodePartitionPosition(single, {std::string()}, &out, &token).ok());
  EXPECT_FALSE(DecodeStorageKey(t, "\x00\x00").ok());
  EXPECT_FALSE(DecodeStorageKey(t, std::string("\x00\x00\x00\x09zz", 6)).ok());
}

}  // namespace
}  // namespace tessera
