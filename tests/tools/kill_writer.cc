// Child process of the kill -9 durability test: opens the database in argv[1],
// creates ks.acked if needed, and writes rows k = argv[2], argv[2] + 1, ... forever,
// printing "ack <k>" after each write is acknowledged (Apply returned OK).
// The parent kills it with SIGKILL mid-stream and checks every acked row.
#include <cstdio>
#include <string>

#include "db/database.h"
#include "types/serialization.h"

int main(int argc, char** argv) {
  using namespace tessera;
  if (argc != 3) {
    std::fprintf(stderr, "usage: kill_writer DATA_DIR FIRST_KEY\n");
    return 2;
  }
  DatabaseOptions o;
  o.data_dir = argv[1];
  auto db = Database::Open(o);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
    return 1;
  }
  KeyspaceMetadata ks;
  ks.name = "ks";
  (*db)->CreateKeyspace(ks, true);
  TableSchema t;
  t.keyspace = "ks";
  t.name = "acked";
  t.columns = {{0, "k", *CqlType::Parse("bigint"), ColumnKind::kPartitionKey, SortOrder::kAsc},
               {1, "v", *CqlType::Parse("text"), ColumnKind::kRegular, SortOrder::kAsc}};
  auto table = (*db)->CreateTable(t, true);
  if (!table.ok()) return 1;
  std::printf("ready\n");
  std::fflush(stdout);
  for (int64_t k = std::stoll(argv[2]);; ++k) {
    Mutation m;
    m.table = *table;
    std::string key;
    Serialize(CqlType::Scalar(TypeKind::kBigint), Value::Int(k), &key);
    m.partition_key = {key};
    RowWrite row;
    row.insert = true;
    row.cells.push_back(CellWrite{1, std::string(1000, static_cast<char>('a' + k % 26))});
    m.rows.push_back(row);
    Status s = (*db)->Apply(m);
    if (!s.ok()) {
      std::fprintf(stderr, "write %lld: %s\n", static_cast<long long>(k), s.ToString().c_str());
      return 1;
    }
    std::printf("ack %lld\n", static_cast<long long>(k));
    std::fflush(stdout);
  }
}
