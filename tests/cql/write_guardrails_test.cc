#include "cql/executor/write_guardrails.h"

#include <gtest/gtest.h>

namespace tessera::cql {
namespace {

std::shared_ptr<const TableSchema> Table() {
  auto t = std::make_shared<TableSchema>();
  t->keyspace = "ks";
  t->name = "t";
  t->columns = {{0, "k", *CqlType::Parse("text"), ColumnKind::kPartitionKey, SortOrder::kAsc},
                {1, "c", *CqlType::Parse("text"), ColumnKind::kClustering, SortOrder::kAsc},
                {2, "v", *CqlType::Parse("blob"), ColumnKind::kRegular, SortOrder::kAsc}};
  return t;
}

Mutation Write(std::string key, std::string ck, size_t value_bytes) {
  Mutation m;
  m.table = Table();
  m.partition_key = {std::move(key)};
  RowWrite row;
  row.clustering = {std::move(ck)};
  row.cells.push_back(CellWrite{2, std::string(value_bytes, 'x')});
  m.rows.push_back(row);
  return m;
}

TEST(WriteGuardrailsTest, WarnsAtTheSeedsThresholdsAndFailsAtCassandrasLimits) {
  Guardrails g;
  std::vector<std::string> warnings;
  EXPECT_TRUE(CheckWriteGuardrails({Write("k", "c", 100)}, g, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(CheckWriteGuardrails({Write(std::string(2000, 'k'), "c", 100)}, g, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("Primary key column k of ks.t is 2 KB"), std::string::npos) << warnings[0];
  warnings.clear();
  EXPECT_TRUE(CheckWriteGuardrails({Write("k", "c", 100 << 10)}, g, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);  // a 100 KB row
  EXPECT_NE(warnings[0].find("guardrail 64 KB"), std::string::npos) << warnings[0];
  warnings.clear();
  EXPECT_TRUE(CheckWriteGuardrails({Write("k", "c", 3 << 20)}, g, &warnings).ok());
  EXPECT_EQ(warnings.size(), 2u);  // the cell and the row
  Status too_long = CheckWriteGuardrails({Write("k", std::string(70000, 'c'), 1)}, g, &warnings);
  EXPECT_TRUE(too_long.IsInvalidArgument());
  EXPECT_NE(too_long.message().find("Key length of 70000 is longer than maximum of 65535"), std::string::npos);
  EXPECT_TRUE(CheckWriteGuardrails({Write("k", "c", 17 << 20)}, g, &warnings).IsInvalidArgument());
}

}  // namespace
}  // namespace tessera::cql
