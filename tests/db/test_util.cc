#include "tests/db/test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "keys/storage_key.h"
#include "types/serialization.h"

namespace tessera::testing {

TestDatabase::TestDatabase(const std::string& name, bool remove_existing)
    : clock_(std::make_shared<std::atomic<int64_t>>(int64_t{1'700'000'000} * 1'000'000)) {
  dir_ = (std::filesystem::temp_directory_path() / ("tessera_" + name + "_" + std::to_string(::getpid()))).string();
  if (remove_existing) std::filesystem::remove_all(dir_);
  Open();
}

TestDatabase::TestDatabase(const std::string& name, Configure configure)
    : clock_(std::make_shared<std::atomic<int64_t>>(int64_t{1'700'000'000} * 1'000'000)),
      configure_(std::move(configure.fn)) {
  dir_ = (std::filesystem::temp_directory_path() / ("tessera_" + name + "_" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir_);
  Open();
}

TestDatabase::~TestDatabase() {
  coordinator_.reset();
  db_.reset();
  std::filesystem::remove_all(dir_);
}

void TestDatabase::Reopen() {
  coordinator_.reset();
  db_.reset();
  // A restart takes time. Timestamps are max(clock, last + 1) per open
  // database, so a clock that stood still would hand out the timestamps of
  // before the reopen again, and a write after it could lose to one before
  // (seen: a view row built at T+5 outlived its deletion at T+2).
  clock_->fetch_add(1000);
  Open();
}

void TestDatabase::Open() {
  DatabaseOptions o;
  o.data_dir = dir_;
  o.block_cache_bytes = 32u << 20;
  auto clock = clock_;
  o.clock_micros = [clock] { return clock->load(); };
  if (configure_) configure_(&o);
  auto db = Database::Open(o);
  if (!db.ok()) {
    ADD_FAILURE() << db.status().ToString();
    return;
  }
  db_ = std::move(db).value();
  coordinator_ = std::make_unique<Coordinator>(db_.get());
  Status started = coordinator_->Start();  // as a single node: unfinished builds resume
  if (!started.ok()) ADD_FAILURE() << started.ToString();
}

static std::string Ser(const char* type, const Value& v) {
  std::string out;
  Status s = Serialize(*CqlType::Parse(type), v, &out);
  if (!s.ok()) ADD_FAILURE() << s.ToString();
  return out;
}

std::string Int(int64_t v) { return Ser("int", Value::Int(v)); }
std::string Bigint(int64_t v) { return Ser("bigint", Value::Int(v)); }
std::string Text(const std::string& s) { return s; }
int64_t AsInt(const std::string& s) { return Deserialize(*CqlType::Parse("int"), s)->as_int(); }
int64_t AsBigint(const std::string& s) { return Deserialize(*CqlType::Parse("bigint"), s)->as_int(); }

std::shared_ptr<const TableSchema> MakeTable(Database& db, const std::string& name, Distribution d,
                                             const std::vector<std::string>& columns, uint32_t initial_tablets) {
  KeyspaceMetadata ks;
  ks.name = "ks";
  EXPECT_TRUE(db.CreateKeyspace(ks, /*if_not_exists=*/true).ok());
  TableSchema t;
  t.keyspace = "ks";
  t.name = name;
  t.distribution = d;
  t.options.initial_tablets = initial_tablets;
  for (const auto& spec : columns) {
    std::vector<std::string> parts;
    std::stringstream ss(spec);
    std::string p;
    while (std::getline(ss, p, ':')) parts.push_back(p);
    ColumnDef c;
    c.name = parts[0];
    c.type = *CqlType::Parse(parts[1]);
    c.kind = parts[2] == "pk" ? ColumnKind::kPartitionKey
           : parts[2] == "ck" ? ColumnKind::kClustering
           : parts[2] == "static" ? ColumnKind::kStatic : ColumnKind::kRegular;
    c.order = parts.size() > 3 && parts[3] == "desc" ? SortOrder::kDesc : SortOrder::kAsc;
    t.columns.push_back(c);
  }
  auto created = db.CreateTable(t);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  return created.ok() ? *created : nullptr;
}

std::shared_ptr<const TableSchema> MakePartitionBucketed(Database& db, uint32_t count, bool automatic,
                                                         int32_t gc_grace) {
  auto plain = MakeTable(db, "t", Distribution::kHash, {"k:int:pk", "c:int:ck", "v:text:regular", "s:text:static"}, 1);
  TableSchema t = *plain;
  EXPECT_TRUE(db.DropTable("ks", "t").ok());
  t.id = 0;
  t.name = "pb";
  t.options.gc_grace_seconds = gc_grace;
  t.partition_buckets.automatic = automatic;
  t.partition_buckets.counts = {count};
  auto created = db.CreateTable(t);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  return *created;
}

Mutation InsertRow(const std::shared_ptr<const TableSchema>& t, std::vector<std::string> pk,
                   std::vector<std::string> ck, const std::vector<std::pair<std::string, std::string>>& cells) {
  Mutation m;
  m.table = t;
  m.partition_key = std::move(pk);
  RowWrite row;
  row.clustering = std::move(ck);
  row.insert = true;
  for (const auto& [name, value] : cells) {
    const ColumnDef* col = t->FindColumn(name);
    EXPECT_NE(col, nullptr) << name;
    if (!col) continue;
    CellWrite c;
    c.column_id = col->id;
    c.value = value;
    row.cells.push_back(c);
  }
  m.rows.push_back(std::move(row));
  return m;
}

std::string CellText(const TableSchema& t, const RowResult& row, const std::string& column) {
  const ColumnDef* col = t.FindColumn(column);
  for (const auto& c : row.cells) {
    if (col && c.column_id == col->id) return c.value;
  }
  return "<absent>";
}

size_t RawKeys(Database& db, const TableSchema& t) {
  auto it = db.engine()->NewIterator(TablePrefix(t.id), TablePrefix(t.id + 1));
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  return n;
}

}  // namespace tessera::testing
