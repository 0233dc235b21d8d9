// Secondary indexes on one node (db/secondary_index.h, coordinator/
// index_maintenance.cc): the backing table's shape, entries kept right by the
// coordinator's writes, the background build, a split of the backing table, a
// restart.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "db/secondary_index.h"
#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

// The base keys (partition key text, clustering bigint) of the index partition for `value`.
std::vector<std::pair<std::string, std::string>> Entries(Database& db, const TableSchema& base,
                                                         const std::string& index, const std::string& value) {
  auto backing = db.GetTable(base.keyspace, base.FindIndex(index)->backing_table);
  EXPECT_TRUE(backing.ok());
  std::vector<std::pair<std::string, std::string>> out;
  SliceRequest req;
  auto slice = db.ReadSlice(*backing, {value}, req);
  EXPECT_TRUE(slice.ok());
  for (const auto& r : slice->partition.rows) out.emplace_back(r.clustering.at(0), r.clustering.at(1));
  return out;
}

Result<std::shared_ptr<const TableSchema>> IndexOn(Coordinator& coordinator, const std::string& table,
                                                   const std::string& column, const std::string& name, bool build) {
  auto base = coordinator.database().GetTable("ks", table);
  if (!base.ok()) return base.status();
  IndexDef index;
  index.name = name;
  index.column_id = (*base)->FindColumn(column)->id;
  return coordinator.CreateIndex("ks", table, index, build);
}

TEST(SecondaryIndexTest, BackingTableIsKeyedByValueThenTheBasePrimaryKey) {
  TestDatabase db("index_shape");
  auto t = MakeTable(db.db(), "events", Distribution::kRange,
                     {"host:text:pk", "ts:bigint:ck:desc", "path:text:regular"});
  ASSERT_TRUE(t);
  IndexDef index{"by_path", t->FindColumn("path")->id, IndexDef::Target::kValues, "by_path_index"};
  auto backing = BackingTableSchema(*t, index);
  ASSERT_TRUE(backing.ok()) << backing.status().ToString();
  ASSERT_EQ(backing->columns.size(), 3u);
  EXPECT_EQ(backing->columns[0].name, kIndexValueColumn);
  EXPECT_EQ(backing->columns[0].kind, ColumnKind::kPartitionKey);
  EXPECT_EQ(backing->columns[1].name, "host");
  EXPECT_EQ(backing->columns[1].kind, ColumnKind::kClustering);
  EXPECT_EQ(backing->columns[2].name, "ts");
  EXPECT_EQ(backing->columns[2].order, SortOrder::kDesc);  // base clustering order kept
  EXPECT_EQ(backing->distribution, Distribution::kHash);    // values spread over tablets by token
  EXPECT_EQ(backing->index_of, "by_path");
  // Every node derives the same uuid; another index gets another.
  EXPECT_EQ(backing->uuid, BackingTableSchema(*t, index)->uuid);
  index.name = "other";
  EXPECT_NE(backing->uuid, BackingTableSchema(*t, index)->uuid);
  // Cassandra's refusal for the only partition key column.
  index.column_id = t->FindColumn("host")->id;
  auto refused = BackingTableSchema(*t, index);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "Cannot create secondary index on the only partition key column host");
}

TEST(SecondaryIndexTest, WritesKeepEntriesAndTheBuildCoversOldRows) {
  TestDatabase db("index_writes");
  auto t = MakeTable(db.db(), "events", Distribution::kHash, {"host:text:pk", "ts:bigint:ck", "path:text:regular"});
  ASSERT_TRUE(t);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(db.coordinator().Apply(InsertRow(t, {Text("h" + std::to_string(i % 5))}, {Bigint(i)},
                                    {{"path", i % 2 ? "/odd" : "/even"}})).ok());
  }
  auto indexed = IndexOn(db.coordinator(), "events", "path", "by_path", /*build=*/true);
  ASSERT_TRUE(indexed.ok()) << indexed.status().ToString();
  for (int i = 0; i < 200 && !db.coordinator().IndexBuilt("ks", "by_path"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(db.coordinator().IndexBuilt("ks", "by_path"));
  EXPECT_EQ(Entries(db.db(), **indexed, "by_path", Text("/odd")).size(), 25u);
  // A write through a schema that predates the index still maintains it.
  ASSERT_TRUE(db.coordinator().Apply(InsertRow(t, {Text("h1")}, {Bigint(1)}, {{"path", "/even"}})).ok());
  EXPECT_EQ(Entries(db.db(), **indexed, "by_path", Text("/odd")).size(), 24u);
  EXPECT_EQ(Entries(db.db(), **indexed, "by_path", Text("/even")).size(), 26u);
  // A partition deletion removes its rows' entries.
  Mutation drop;
  drop.table = t;
  drop.partition_key = {Text("h0")};
  drop.delete_partition = true;
  ASSERT_TRUE(db.coordinator().Apply(drop).ok());
  for (const auto& [host, ts] : Entries(db.db(), **indexed, "by_path", Text("/even"))) EXPECT_NE(host, Text("h0"));

  // The backing table splits like any other table, and entries stay readable.
  auto backing = db->GetTable("ks", "by_path_index");
  ASSERT_TRUE(backing.ok());
  const auto before = db->Tablets(**backing);
  ASSERT_TRUE(db->SplitTablet(**backing, before[0].id).ok());
  EXPECT_EQ(db->Tablets(**backing).size(), before.size() + 1);
  const auto even = Entries(db.db(), **indexed, "by_path", Text("/even"));
  EXPECT_EQ(Entries(db.db(), **indexed, "by_path", Text("/odd")).size() + even.size(), 40u);

  // Indexes and their entries survive a restart; dropping one drops its table.
  db.Reopen();
  auto again = db->GetTable("ks", "events");
  ASSERT_TRUE(again.ok() && (*again)->FindIndex("by_path"));
  EXPECT_EQ(Entries(db.db(), **again, "by_path", Text("/even")), even);
  ASSERT_TRUE(db.coordinator().DropIndex("ks", "by_path").ok());
  EXPECT_TRUE(db->GetTable("ks", "by_path_index").status().IsNotFound());
  EXPECT_TRUE(db.coordinator().DropIndex("ks", "by_path").status().IsNotFound());
}

// The store below the coordinator is replica-local: a write straight to it
// changes the base rows alone, the same write through the coordinator keeps
// the entries right.
TEST(SecondaryIndexTest, TheStoreAloneKeepsNoEntriesTheCoordinatorDoes) {
  TestDatabase db("index_layers");
  auto t = MakeTable(db.db(), "events", Distribution::kHash, {"host:text:pk", "ts:bigint:ck", "path:text:regular"});
  ASSERT_TRUE(t);
  auto indexed = IndexOn(db.coordinator(), "events", "path", "by_path", /*build=*/false);
  ASSERT_TRUE(indexed.ok()) << indexed.status().ToString();
  ASSERT_TRUE(db->Apply(InsertRow(t, {Text("h1")}, {Bigint(1)}, {{"path", "/a"}})).ok());
  EXPECT_TRUE(Entries(db.db(), **indexed, "by_path", Text("/a")).empty());
  ASSERT_TRUE(db.coordinator().Apply(InsertRow(t, {Text("h1")}, {Bigint(2)}, {{"path", "/a"}})).ok());
  const auto entries = Entries(db.db(), **indexed, "by_path", Text("/a"));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0], std::make_pair(Text("h1"), Bigint(2)));
}

// A build a stopping node did not run is recorded, and the next start runs it.
TEST(SecondaryIndexTest, ABuildNotRunBeforeAStopRunsAtTheNextStart) {
  TestDatabase db("index_resume");
  auto t = MakeTable(db.db(), "events", Distribution::kHash, {"host:text:pk", "ts:bigint:ck", "path:text:regular"});
  ASSERT_TRUE(t);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(db.coordinator().Apply(InsertRow(t, {Text("h" + std::to_string(i % 3))}, {Bigint(i)},
                                                 {{"path", i % 3 ? "/other" : "/three"}})).ok());
  }
  db.coordinator().Stop();  // no build starts from here on
  auto indexed = IndexOn(db.coordinator(), "events", "path", "by_path", /*build=*/true);
  ASSERT_TRUE(indexed.ok()) << indexed.status().ToString();
  EXPECT_TRUE(Entries(db.db(), **indexed, "by_path", Text("/three")).empty());
  db.Reopen();  // TestDatabase starts the new coordinator, as a node does
  for (int i = 0; i < 200 && !db.coordinator().IndexBuilt("ks", "by_path"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(db.coordinator().IndexBuilt("ks", "by_path"));
  EXPECT_EQ(Entries(db.db(), **indexed, "by_path", Text("/three")).size(), 10u);
}

}  // namespace
}  // namespace tessera
