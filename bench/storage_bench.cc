// Micro-benchmarks of the storage core (Google Benchmark). Results and the
// RocksDB db_bench figures of the same run: bench/RESULTS.md; runner:
// bench/run_storage_bench.sh.
//
// The database benchmarks use one embedded Database in $TESSERA_BENCH_DIR
// (default /tmp/tessera_bench) holding kRows rows of 1000-byte values, the
// shape of db_bench --num=1000000 --value_size=1000.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "db/database.h"
#include "keys/key_encoding.h"
#include "keys/storage_key.h"
#include "keys/token.h"
#include "types/serialization.h"

namespace tessera {
namespace {

constexpr int64_t kRows = 1'000'000;
constexpr int kSliceRows = 100;

std::string BigintBytes(int64_t v) {
  std::string out;
  Serialize(CqlType::Scalar(TypeKind::kBigint), Value::Int(v), &out);
  return out;
}

void BM_EncodeKey(benchmark::State& state) {
  CqlType text = CqlType::Scalar(TypeKind::kText), bigint = CqlType::Scalar(TypeKind::kBigint);
  std::string host = "web-server-042.example.com", ts = BigintBytes(1700000000123);
  std::string out;
  for (auto _ : state) {
    out.clear();
    EncodeKeyComponent(text, host, SortOrder::kAsc, &out);
    EncodeKeyComponent(bigint, ts, SortOrder::kDesc, &out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_EncodeKey);

void BM_Token(benchmark::State& state) {
  std::string key = "user-0000001234567";
  for (auto _ : state) benchmark::DoNotOptimize(TokenOfRoutingKey(key));
}
BENCHMARK(BM_Token);

struct Fixture {
  std::unique_ptr<Database> db;
  std::shared_ptr<const TableSchema> kv;     // k bigint PRIMARY KEY, v blob
  std::shared_ptr<const TableSchema> slice;  // (p bigint, c bigint), v blob
};

Fixture& Shared() {
  static Fixture f = [] {
    Fixture f;
    const char* env = std::getenv("TESSERA_BENCH_DIR");
    std::string dir = env ? env : "/tmp/tessera_bench";
    std::filesystem::remove_all(dir);
    DatabaseOptions o;
    o.data_dir = dir;
    f.db = std::move(Database::Open(o)).value();
    KeyspaceMetadata ks;
    ks.name = "bench";
    f.db->CreateKeyspace(ks);
    TableSchema kv;
    kv.keyspace = "bench";
    kv.name = "kv";
    kv.columns = {{0, "k", CqlType::Scalar(TypeKind::kBigint), ColumnKind::kPartitionKey, SortOrder::kAsc},
                  {1, "v", CqlType::Scalar(TypeKind::kBlob), ColumnKind::kRegular, SortOrder::kAsc}};
    f.kv = std::move(f.db->CreateTable(kv)).value();
    TableSchema sl = kv;
    sl.name = "slice";
    sl.columns = {{0, "p", CqlType::Scalar(TypeKind::kBigint), ColumnKind::kPartitionKey, SortOrder::kAsc},
                  {1, "c", CqlType::Scalar(TypeKind::kBigint), ColumnKind::kClustering, SortOrder::kAsc},
                  {2, "v", CqlType::Scalar(TypeKind::kBlob), ColumnKind::kRegular, SortOrder::kAsc}};
    f.slice = std::move(f.db->CreateTable(sl)).value();
    return f;
  }();
  return f;
}

Mutation KvWrite(const Fixture& f, int64_t k, const std::string& value) {
  Mutation m;
  m.table = f.kv;
  m.partition_key = {BigintBytes(k)};
  RowWrite row;
  row.insert = true;
  row.cells.push_back(CellWrite{1, value});
  m.rows.push_back(std::move(row));
  return m;
}

// Random single-row INSERTs of a 1000-byte value (cf. db_bench fillrandom).
void BM_SingleRowWrite(benchmark::State& state) {
  Fixture& f = Shared();
  std::mt19937_64 rng(1);
  std::string value(1000, 'v');
  for (auto _ : state) {
    Status s = f.db->Apply(KvWrite(f, static_cast<int64_t>(rng() % kRows), value));
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SingleRowWrite)->Unit(benchmark::kMicrosecond);

// Loads all kRows keys once (sequentially), then random point reads
// (cf. db_bench readrandom on a filled database).
void BM_PointRead(benchmark::State& state) {
  Fixture& f = Shared();
  static bool loaded = [&] {
    std::string value(1000, 'v');
    for (int64_t k = 0; k < kRows; ++k) f.db->Apply(KvWrite(f, k, value));
    f.db->Flush();
    return true;
  }();
  benchmark::DoNotOptimize(loaded);
  std::mt19937_64 rng(2);
  int64_t found = 0;
  for (auto _ : state) {
    auto row = f.db->ReadRow(f.kv, {BigintBytes(static_cast<int64_t>(rng() % kRows))}, {});
    found += row.ok() && row->has_value();
  }
  state.counters["found"] = static_cast<double>(found) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PointRead)->Unit(benchmark::kMicrosecond);

// Reads 100 clustering rows (1000-byte values) of one of 1000 partitions.
void BM_PartitionSlice(benchmark::State& state) {
  Fixture& f = Shared();
  static bool loaded = [&] {
    std::string value(1000, 's');
    for (int64_t p = 0; p < 1000; ++p) {
      for (int64_t c = 0; c < kSliceRows; ++c) {
        Mutation m;
        m.table = f.slice;
        m.partition_key = {BigintBytes(p)};
        RowWrite row;
        row.clustering = {BigintBytes(c)};
        row.insert = true;
        row.cells.push_back(CellWrite{2, value});
        m.rows.push_back(std::move(row));
        f.db->Apply(m);
      }
    }
    f.db->Flush();
    return true;
  }();
  benchmark::DoNotOptimize(loaded);
  std::mt19937_64 rng(3);
  size_t rows = 0;
  for (auto _ : state) {
    auto r = f.db->ReadSlice(f.slice, {BigintBytes(static_cast<int64_t>(rng() % 1000))}, SliceRequest{});
    rows += r.ok() ? r->partition.rows.size() : 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows));
}
BENCHMARK(BM_PartitionSlice)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
