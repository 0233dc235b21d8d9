#include <gtest/gtest.h>

#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

TEST(DatabaseSchemaTest, CatalogTabletsAndDataSurviveRestart) {
  TestDatabase db("schema_restart");
  auto t = MakeTable(db.db(), "events", Distribution::kRange,
                     {"host:text:pk", "ts:timestamp:ck:desc", "path:text:regular"});
  ASSERT_TRUE(t);
  ASSERT_TRUE(db->Apply(InsertRow(t, {Text("h1")}, {Bigint(5)}, {{"path", "/a"}})).ok());
  auto before = db->Tablets(*t);
  db.Reopen();
  auto again = db->GetTable("ks", "events");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->id, t->id);
  EXPECT_EQ((*again)->uuid, t->uuid);
  EXPECT_EQ((*again)->distribution, Distribution::kRange);
  EXPECT_EQ((*again)->Clustering()[0]->order, SortOrder::kDesc);
  auto after = db->Tablets(**again);
  ASSERT_EQ(after.size(), before.size());
  EXPECT_EQ(after[0].id, before[0].id);
  auto row = db->ReadRow(*again, {Text("h1")}, {Bigint(5)});
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ(CellText(**again, **row, "path"), "/a");
}

TEST(DatabaseSchemaTest, DuplicateAndMissingObjectsAreReported) {
  TestDatabase db("schema_errors");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:int:pk", "v:text:regular"});
  KeyspaceMetadata ks;
  ks.name = "ks";
  EXPECT_TRUE(db->CreateKeyspace(ks).IsAlreadyExists());
  EXPECT_TRUE(db->CreateKeyspace(ks, true).ok());
  TableSchema dup = *t;
  EXPECT_TRUE(db->CreateTable(dup).status().IsAlreadyExists());
  EXPECT_TRUE(db->CreateTable(dup, true).ok());
  EXPECT_TRUE(db->DropTable("ks", "nope").IsNotFound());
  EXPECT_TRUE(db->DropTable("ks", "nope", true).ok());
  TableSchema orphan = *t;
  orphan.keyspace = "missing";
  EXPECT_TRUE(db->CreateTable(orphan).status().IsNotFound());
  TableSchema bad = *t;
  bad.name = "bad";
  bad.columns[1].kind = ColumnKind::kClustering;
  bad.columns[1].type = *CqlType::Parse("list<int>");
  EXPECT_TRUE(db->CreateTable(bad).status().IsInvalidArgument());
}

TEST(DatabaseSchemaTest, AlterKeepsColumnIdsAndDropRemovesData) {
  TestDatabase db("schema_alter");
  auto t = MakeTable(db.db(), "t", Distribution::kHash, {"k:int:pk", "a:text:regular", "b:text:regular"});
  ASSERT_TRUE(db->Apply(InsertRow(t, {Int(1)}, {}, {{"b", "bee"}})).ok());
  TableSchema altered = *t;
  altered.columns.erase(altered.columns.begin() + 1);  // DROP a
  ColumnDef c;
  c.name = "c";
  c.type = *CqlType::Parse("int");
  altered.columns.push_back(c);  // ADD c
  auto t2 = db->AlterTable(altered);
  ASSERT_TRUE(t2.ok()) << t2.status().ToString();
  EXPECT_EQ((*t2)->FindColumn("b")->id, t->FindColumn("b")->id);
  EXPECT_EQ((*t2)->FindColumn("c")->id, 3u);  // never reuses a's id
  auto row = db->ReadRow(*t2, {Int(1)}, {});
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ(CellText(**t2, **row, "b"), "bee");
  TableSchema rekey = **t2;
  rekey.columns[0].type = *CqlType::Parse("bigint");
  EXPECT_TRUE(db->AlterTable(rekey).status().IsInvalidArgument());

  ASSERT_TRUE(db->DropTable("ks", "t").ok());
  auto t3 = MakeTable(db.db(), "t", Distribution::kHash, {"k:int:pk", "b:text:regular"});
  EXPECT_NE(t3->id, t->id);
  auto gone = db->ReadRow(t3, {Int(1)}, {});
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  ASSERT_TRUE(db->DropKeyspace("ks").ok());
  EXPECT_TRUE(db->GetTable("ks", "t").status().IsNotFound());
}

}  // namespace
}  // namespace tessera
