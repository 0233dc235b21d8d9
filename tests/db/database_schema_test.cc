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

// User types: persisted, resolved for tables on reload (also a type inside a
// type), ALTER rewrites the definition tables and types hold, DROP refused while used.
TEST(DatabaseSchemaTest, UserTypesSurviveRestartAndAlterReachesEveryHolder) {
  TestDatabase db("schema_user_types");
  MakeTable(db.db(), "seed", Distribution::kHash, {"k:int:pk"});  // creates keyspace ks
  const Catalog& catalog = db->catalog();
  const CqlType text = CqlType::Scalar(TypeKind::kText);
  const CqlType address = CqlType::UserType("ks", "address", {"street"}, {text}, true);
  ASSERT_TRUE(db->CreateType(address).ok());
  EXPECT_TRUE(db->CreateType(address).IsAlreadyExists());
  const UserTypeLookup lookup = catalog.TypeLookup("ks");
  auto person = CqlType::Parse("frozen<tuple<text, frozen<address>>>", &lookup);  // a holder of the type
  ASSERT_TRUE(person.ok());
  const CqlType owner = CqlType::UserType("ks", "owner", {"home"}, {address}, true);
  ASSERT_TRUE(db->CreateType(owner).ok());
  TableSchema t;
  t.keyspace = "ks";
  t.name = "people";
  t.columns = {{0, "k", address, ColumnKind::kPartitionKey}, {0, "home", address.WithFrozen(false)},
               {0, "pair", *person}, {0, "o", owner}};
  auto created = db->CreateTable(t);
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  db.Reopen();
  const Catalog& reopened = db->catalog();
  ASSERT_TRUE(reopened.GetType("ks", "owner").has_value());
  EXPECT_EQ(*reopened.GetType("ks", "owner"), owner);
  auto table = db->GetTable("ks", "people");
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*table)->FindColumn("home")->type, address.WithFrozen(false));
  EXPECT_TRUE((*table)->FindColumn("home")->type.IsMultiCell());
  EXPECT_EQ((*table)->FindColumn("home")->type.ToCql(), "address");

  const CqlType grown = CqlType::UserType("ks", "address", {"street", "city"}, {text, text}, true);
  ASSERT_TRUE(db->AlterType(grown).ok());
  table = db->GetTable("ks", "people");
  EXPECT_EQ((*table)->FindColumn("k")->type, grown);
  EXPECT_EQ((*table)->FindColumn("home")->type, grown.WithFrozen(false));
  EXPECT_EQ((*table)->FindColumn("pair")->type.params()[1], grown);
  EXPECT_EQ(reopened.GetType("ks", "owner")->params()[0], grown);
  EXPECT_EQ((*table)->FindColumn("o")->type.params()[0], grown);

  EXPECT_TRUE(db->DropType("ks", "address").IsInvalidArgument());
  ASSERT_TRUE(db->DropTable("ks", "people").ok());
  EXPECT_TRUE(db->DropType("ks", "address").IsInvalidArgument());  // owner holds it
  ASSERT_TRUE(db->DropType("ks", "owner").ok());
  ASSERT_TRUE(db->DropType("ks", "address").ok());
  EXPECT_TRUE(db->DropType("ks", "address").IsNotFound());
  db.Reopen();
  EXPECT_TRUE(db->catalog().Types("ks").empty());
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
