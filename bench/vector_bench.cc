// Vector search benchmark (issue 31, must-show 3): recall@k of ORDER BY ...
// ANN OF against an exact search, and both searches' queries per second and
// latency, through the query processor of an embedded node (no network).
//
// Data: a generated clustered set, since no Debian or npm package ships an
// embedding set: `clusters` centres drawn from N(0, 1)^dim, each vector a
// centre plus N(0, spread)^dim noise (std::mt19937 seeded with --seed, so
// every run stores the same vectors). Queries are drawn the same way and are
// not in the set. Ground truth: the exact cosine top k over every stored
// vector, computed here in memory. "Exact search" for the timing is what a
// user without the index runs: every row with similarity_cosine(v, q),
// ranked by the client (here).
//
// Usage: vector_bench [--vectors 100000] [--dim 128] [--queries 200]
//                     [--k 10] [--clusters 200] [--spread 0.4]
//                     [--exact-queries 5] [--seed 1] [--data-dir DIR]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "cql/executor/query_processor.h"
#include "cql/protocol/response_decoding.h"
#include "db/database.h"
#include "db/vector_index.h"
#include "types/serialization.h"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  size_t vectors = 100'000, dim = 128, queries = 200, k = 10, clusters = 200, exact_queries = 5;
  double spread = 0.4;
  unsigned seed = 1;
  std::string data_dir = "/tmp/tessera_vector_bench";
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--vectors") o.vectors = std::strtoull(v, nullptr, 10);
    else if (flag == "--dim") o.dim = std::strtoull(v, nullptr, 10);
    else if (flag == "--queries") o.queries = std::strtoull(v, nullptr, 10);
    else if (flag == "--k") o.k = std::strtoull(v, nullptr, 10);
    else if (flag == "--clusters") o.clusters = std::strtoull(v, nullptr, 10);
    else if (flag == "--exact-queries") o.exact_queries = std::strtoull(v, nullptr, 10);
    else if (flag == "--spread") o.spread = std::strtod(v, nullptr);
    else if (flag == "--seed") o.seed = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
    else if (flag == "--data-dir") o.data_dir = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

std::string Literal(const std::vector<float>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.9g", i ? ", " : "", static_cast<double>(v[i]));  // a float's exact digits
    s += buf;
  }
  return s + "]";
}

class Runner {
 public:
  explicit Runner(Database* db) : coordinator_(db), processor_(&coordinator_, cql::NodeInfo{}) {}
  cql::DecodedResponse Run(const std::string& cql) {
    cql::QueryRequest q;
    q.query = cql;
    q.params.consistency = cql::Consistency::kOne;
    cql::Reply r = processor_.Process(conn_, cql::Request{q}, {});
    auto d = cql::DecodeResponse(static_cast<uint8_t>(r.opcode), 0, r.body);
    if (!d.ok() || d->is_error()) {
      std::fprintf(stderr, "%s: %s\n", cql.substr(0, 120).c_str(), d.ok() ? d->error_message.c_str() : "undecodable");
      std::exit(1);
    }
    return *d;
  }

 private:
  Coordinator coordinator_;
  cql::QueryProcessor processor_;
  cql::ConnectionState conn_;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

int Main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::filesystem::remove_all(o.data_dir);
  DatabaseOptions dbo;
  dbo.data_dir = o.data_dir;
  auto db = Database::Open(dbo);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  Runner run(db->get());
  run.Run("CREATE KEYSPACE vb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  run.Run("CREATE TABLE vb.items (id int PRIMARY KEY, v vector<float, " + std::to_string(o.dim) + ">)");
  run.Run("CREATE CUSTOM INDEX items_v ON vb.items (v) USING 'StorageAttachedIndex' "
          "WITH OPTIONS = {'similarity_function': 'cosine'}");

  std::mt19937 rng(o.seed);
  std::normal_distribution<float> unit(0, 1), noise(0, static_cast<float>(o.spread));
  std::vector<std::vector<float>> centres(o.clusters, std::vector<float>(o.dim));
  for (auto& c : centres) {
    for (float& x : c) x = unit(rng);
  }
  auto draw = [&] {
    const auto& c = centres[rng() % centres.size()];
    std::vector<float> v(o.dim);
    for (size_t i = 0; i < o.dim; ++i) v[i] = c[i] + noise(rng);
    return v;
  };
  std::vector<std::vector<float>> stored(o.vectors);
  const auto load_start = Clock::now();
  for (size_t i = 0; i < o.vectors; ++i) {
    stored[i] = draw();
    run.Run("INSERT INTO vb.items (id, v) VALUES (" + std::to_string(i) + ", " + Literal(stored[i]) + ")");
  }
  const double load_seconds = std::chrono::duration<double>(Clock::now() - load_start).count();

  // Ground truth and the ANN queries.
  double hits = 0;
  std::vector<double> ann_ms;
  for (size_t q = 0; q < o.queries; ++q) {
    const std::vector<float> query = draw();
    std::vector<std::pair<float, int32_t>> scored;
    for (size_t i = 0; i < stored.size(); ++i) {
      scored.emplace_back(VectorSimilarity(IndexDef::Similarity::kCosine, query, stored[i]), static_cast<int32_t>(i));
    }
    std::partial_sort(scored.begin(), scored.begin() + static_cast<long>(o.k), scored.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    const auto start = Clock::now();
    auto r = run.Run("SELECT id FROM vb.items ORDER BY v ANN OF " + Literal(query) + " LIMIT " + std::to_string(o.k));
    ann_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    for (const auto& row : r.rows.rows) {
      const auto id = static_cast<int32_t>(GetBigEndian32(row[0]->data()));
      for (size_t j = 0; j < o.k; ++j) hits += scored[j].second == id ? 1 : 0;
    }
  }
  // Exact search: every row with its similarity, ranked here.
  std::vector<double> exact_ms;
  for (size_t q = 0; q < o.exact_queries; ++q) {
    const std::vector<float> query = draw();
    const auto start = Clock::now();
    auto r = run.Run("SELECT id, similarity_cosine(v, " + Literal(query) + ") FROM vb.items");
    std::vector<std::pair<float, int32_t>> scored;
    for (const auto& row : r.rows.rows) {
      auto s = Deserialize(CqlType::Scalar(TypeKind::kFloat), *row[1]);
      scored.emplace_back(s->as_float(), static_cast<int32_t>(GetBigEndian32(row[0]->data())));
    }
    std::partial_sort(scored.begin(), scored.begin() + static_cast<long>(std::min(o.k, scored.size())), scored.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    exact_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (scored.size() != o.vectors) {
      std::fprintf(stderr, "exact search read %zu rows of %zu\n", scored.size(), o.vectors);
      return 1;
    }
  }
  double ann_total = 0, exact_total = 0;
  for (double m : ann_ms) ann_total += m;
  for (double m : exact_ms) exact_total += m;
  // The first ANN query builds nothing here (the index grew with the inserts).
  std::printf("vectors %zu dim %zu clusters %zu spread %.2f k %zu\n", o.vectors, o.dim, o.clusters, o.spread, o.k);
  std::printf("load: %.1f s, %.0f inserts/s (index maintained on every write)\n", load_seconds,
              static_cast<double>(o.vectors) / load_seconds);
  std::printf("recall@%zu: %.4f over %zu queries\n", o.k, hits / static_cast<double>(o.queries * o.k), o.queries);
  std::printf("ANN   : %.1f queries/s, p50 %.2f ms, p99 %.2f ms\n", 1000.0 * static_cast<double>(ann_ms.size()) / ann_total,
              Percentile(ann_ms, 0.5), Percentile(ann_ms, 0.99));
  if (!exact_ms.empty()) {
    std::printf("exact : %.2f queries/s, p50 %.1f ms, p99 %.1f ms (%zu queries)\n",
                1000.0 * static_cast<double>(exact_ms.size()) / exact_total, Percentile(exact_ms, 0.5),
                Percentile(exact_ms, 0.99), exact_ms.size());
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
