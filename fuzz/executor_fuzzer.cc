// libFuzzer target: the CQL executor behind the front door. Statements run
// through QueryProcessor against an in-process database (a fresh data
// directory under /tmp), over a fixed schema of tables holding every type,
// key shape and ordering. Properties:
//  - no crash, no hang, no sanitizer report;
//  - every reply decodes (cql/protocol/response_decoding.h);
//  - every error carries one of the protocol's codes, and never 0x0000
//    (ServerError: an internal failure reaching the client);
//  - a SELECT page answered as a cluster node answers it, from its reads'
//    answers (QueryProcessor::ProcessAsync with a ClusterView: deferred
//    reads, pages read in steps, index scans, replayed GROUP BY and INs;
//    here every answer comes inline), equals the one QueryProcessor::Process
//    reads as it goes: same opcode, body (rows and paging state) and
//    warnings. Statements whose answer depends on the moment or on the node
//    (now(), uuid(), TTLs, system tables) or that call a user function are
//    left out, and a page whose plain answer changes between a run before
//    and a run after is skipped.
//
// Input: lines of CQL, one statement each, at most 24 run per input.
//  - "P <statement>": PREPARE, then EXECUTE with values generated per bind
//    marker from its type: null, unset, empty, extremes, elements counts that
//    lie, random bytes.
//  - any other line: QUERY. Its page size comes from the line's hash, and up
//    to 4 further pages are fetched with the returned paging state, sometimes
//    after flipping a byte of it.
// User-defined functions (Lua) are enabled, with a 50 ms time limit.
// The corpus starts from every statement of the test suite
// (fuzz/seed_executor_corpus.py) and fuzz/executor_seeds.cql.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/bytes.h"
#include "cql/executor/query_processor.h"
#include "cql/protocol/response_decoding.h"
#include "db/database.h"
#include "fuzz/fuzz_support.h"
#include "tracing/trace_store.h"

namespace {

using namespace tessera;
using namespace tessera::cql;

const char* const kSchema[] = {
    "CREATE KEYSPACE IF NOT EXISTS fz WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TABLE IF NOT EXISTS fz.every_type (k int, c text, a ascii, b bigint, bl blob, bo boolean, d date, "
    "de decimal, db double, du duration, f float, i inet, n int, s smallint, t text, tm time, ts timestamp, "
    "tu timeuuid, ti tinyint, u uuid, vc varchar, vi varint, PRIMARY KEY (k, c))",
    "CREATE TABLE IF NOT EXISTS fz.keys (a int, b text, c timestamp, d uuid, v int, PRIMARY KEY ((a, b), c, d)) "
    "WITH CLUSTERING ORDER BY (c DESC, d ASC)",
    "CREATE TABLE IF NOT EXISTS fz.ranged (ts timestamp, seq int, host text, v bigint, PRIMARY KEY (ts, seq)) "
    "WITH distribution = 'range'",
    "CREATE TABLE IF NOT EXISTS fz.bucketed (ts timestamp, seq int, v bigint, PRIMARY KEY (ts, seq)) "
    "WITH distribution = 'range' AND buckets = 4",
    "CREATE SEQUENCE IF NOT EXISTS fz.seq WITH kind = 'bit_reversed_positive'",
    "CREATE TABLE IF NOT EXISTS fz.coll (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, "
    "fl frozen<list<int>>, fm frozen<map<int, text>>, tp tuple<int, text>, nested map<int, frozen<set<text>>>)",
    "CREATE TABLE IF NOT EXISTS fz.wide (a int, b int, c int, s int STATIC, v int, PRIMARY KEY ((a), b, c))",
    "CREATE TABLE IF NOT EXISTS fz.counts (k int, c int, n counter, m counter, PRIMARY KEY (k, c))",
    "CREATE TABLE IF NOT EXISTS fz.spread (a int, b int, c text, s int STATIC, v int, PRIMARY KEY ((a), b, c)) "
    "WITH CLUSTERING ORDER BY (b DESC, c ASC) AND partition_buckets = 4",
    "CREATE TABLE IF NOT EXISTS fz.fkeys (k frozen<list<int>>, c frozen<map<text, int>>, t tuple<int, text>, "
    "v int, PRIMARY KEY (k, c, t))",
    "CREATE TYPE IF NOT EXISTS fz.addr (street text, zip int, tags frozen<set<text>>)",
    "CREATE TYPE IF NOT EXISTS fz.person (name text, home frozen<addr>)",
    "CREATE TABLE IF NOT EXISTS fz.udts (k int, c frozen<addr>, fa frozen<addr>, na addr, p frozen<person>, "
    "la list<frozen<addr>>, PRIMARY KEY (k, c))",
    // Secondary indexes of every kind: each write to fz.indexed maintains nine backing tables.
    "CREATE TABLE IF NOT EXISTS fz.indexed (a int, b int, c text, s int STATIC, v int, l list<int>, "
    "m map<text, int>, f frozen<set<int>>, PRIMARY KEY ((a, b), c))",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (v)",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (b)",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (c)",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (s)",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (l)",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (KEYS(m))",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (ENTRIES(m))",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (VALUES(m))",
    "CREATE INDEX IF NOT EXISTS ON fz.indexed (FULL(f))",
    // Vectors (Cassandra 5.0): an ANN index per similarity, each write refreshes them.
    "CREATE TABLE IF NOT EXISTS fz.vectors (k int, c int, v vector<float, 3>, w vector<float, 2>, "
    "t vector<text, 2>, PRIMARY KEY (k, c))",
    "CREATE CUSTOM INDEX IF NOT EXISTS ON fz.vectors (v) USING 'StorageAttachedIndex'",
    "CREATE CUSTOM INDEX IF NOT EXISTS ON fz.vectors (w) USING 'vector_index' "
    "WITH OPTIONS = {'similarity_function': 'euclidean'}",
    // Materialized views: each write to fz.viewed reads its rows before and after
    // and keeps two views right (one keyed by a regular column, one reordered).
    "CREATE TABLE IF NOT EXISTS fz.viewed (a int, b int, c text, v int, d duration, l list<int>, m map<text, int>, "
    "PRIMARY KEY ((a), b))",
    "CREATE MATERIALIZED VIEW IF NOT EXISTS fz.viewed_by_c AS SELECT * FROM fz.viewed "
    "WHERE c IS NOT NULL AND a IS NOT NULL AND b IS NOT NULL PRIMARY KEY (c, a, b)",
    "CREATE MATERIALIZED VIEW IF NOT EXISTS fz.viewed_by_b AS SELECT a, b, v FROM fz.viewed "
    "WHERE a IS NOT NULL AND b IS NOT NULL PRIMARY KEY (b, a) WITH CLUSTERING ORDER BY (a DESC)",
};

// What the deferring processor sees of a cluster: no other node.
class NoPeers : public ClusterView {
 public:
  std::vector<PeerInfo> Peers() const override { return {}; }
  std::vector<int64_t> LocalTokens() const override { return {0}; }
};

struct Harness {
  std::unique_ptr<tracing::TraceStore> traces;  // before the processor, which begins sessions in it
  std::unique_ptr<Database> db;
  std::unique_ptr<Coordinator> coordinator;  // above db: the processors write through it
  std::unique_ptr<QueryProcessor> processor;
  NoPeers no_peers;
  std::unique_ptr<QueryProcessor> deferring;  // as a cluster node: SELECTs answered from their reads' answers
  uint64_t inputs = 0;
  uint64_t compared = 0;
};

Harness* harness = nullptr;

uint64_t Fnv(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

Reply Run(ConnectionState& conn, const Request& request) {
  // Every other input traced by its flag (the rest by the store's
  // probability): tracing runs beside every statement kind.
  RequestFlags flags;
  flags.tracing = harness->inputs % 2 == 0;
  Reply r = harness->processor->Process(conn, request, flags);
  const bool traceable = std::holds_alternative<QueryRequest>(request) ||
                         std::holds_alternative<ExecuteRequest>(request) ||
                         std::holds_alternative<BatchRequest>(request) || std::holds_alternative<PrepareRequest>(request);
  if (flags.tracing && traceable && r.tracing_id.size() != 16) {
    std::fprintf(stderr, "a traced request was answered without a 16-byte tracing id\n");
    abort();
  }
  fuzz::DecodeReplyOrAbort(r);
  return r;
}

std::string Be(uint64_t v, int bytes) {
  std::string out;
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

// A value for a marker of `type`, chosen by `rng`.
WireValue ValueFor(const CqlType& type, std::mt19937_64& rng) {
  switch (rng() % 12) {
    case 0: return WireValue{WireValue::Kind::kNull, ""};
    case 1: return WireValue{WireValue::Kind::kUnset, ""};
    case 2: return WireValue::Of("");
    case 3: {  // random bytes of a random small length
      std::string b(rng() % 20, '\0');
      for (auto& c : b) c = static_cast<char>(rng());
      return WireValue::Of(b);
    }
    case 4: return WireValue::Of(Be(0, 4));                    // an empty collection, or int 0
    case 5: return WireValue::Of(Be(0x7fffffff, 4) + Be(1, 4));  // a count that lies
    default: break;
  }
  const uint64_t extremes[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0x7fffffff, 0x80000000, 0xffffffff,
                               0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull};
  const uint64_t x = extremes[rng() % (sizeof extremes / sizeof extremes[0])];
  switch (type.kind()) {
    case TypeKind::kTinyint: return WireValue::Of(Be(x, 1));
    case TypeKind::kSmallint: return WireValue::Of(Be(x, 2));
    case TypeKind::kInt: case TypeKind::kDate: case TypeKind::kFloat: return WireValue::Of(Be(x, 4));
    case TypeKind::kBigint: case TypeKind::kTimestamp: case TypeKind::kTime: case TypeKind::kDouble:
      return WireValue::Of(Be(x, 8));
    case TypeKind::kBoolean: return WireValue::Of(std::string(1, static_cast<char>(x & 1)));
    case TypeKind::kUuid: case TypeKind::kTimeuuid: return WireValue::Of(Be(x, 8) + Be(rng(), 8));
    case TypeKind::kInet: return WireValue::Of(rng() % 2 ? Be(x, 4) : Be(x, 8) + Be(x, 8));
    case TypeKind::kList: case TypeKind::kSet: {
      const uint32_t n = rng() % 4;
      std::string b = Be(n, 4);
      for (uint32_t i = 0; i < n; ++i) b += Be(4, 4) + Be(rng(), 4);
      return WireValue::Of(b);
    }
    case TypeKind::kMap: {
      const uint32_t n = rng() % 3;
      std::string b = Be(n, 4);
      for (uint32_t i = 0; i < n; ++i) b += Be(4, 4) + Be(rng(), 4) + Be(4, 4) + Be(rng(), 4);
      return WireValue::Of(b);
    }
    default: {
      std::string b(rng() % 40, 'x');
      for (auto& c : b) c = static_cast<char>('a' + rng() % 26);
      return WireValue::Of(b);
    }
  }
}

void PrepareAndExecute(ConnectionState& conn, const std::string& text, std::mt19937_64& rng) {
  Reply prepared = Run(conn, PrepareRequest{text});
  if (prepared.opcode != Opcode::kResult) return;
  auto decoded = DecodeResponse(static_cast<uint8_t>(prepared.opcode), 0, prepared.body);
  if (!decoded.ok() || decoded->result_kind != 4) return;
  for (int round = 0; round < 3; ++round) {
    ExecuteRequest execute{decoded->prepared.id, {}};
    for (const auto& spec : decoded->prepared.bind_columns) execute.params.values.push_back(ValueFor(spec.type, rng));
    if (rng() % 8 == 0 && !execute.params.values.empty()) execute.params.values.pop_back();  // too few values
    execute.params.page_size = static_cast<int32_t>(rng() % 4 == 0 ? 2 : 5000);
    Run(conn, execute);
  }
}

// Whether `text` is a SELECT whose answer depends only on the stored rows.
bool Comparable(const std::string& text) {
  std::string lower;
  for (char c : text) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  const size_t first = lower.find_first_not_of(" \t\r(");
  if (first == std::string::npos || lower.compare(first, 6, "select") != 0) return false;
  for (const char* varying : {"now", "uuid", "current", "ttl", "system", "rand", "nextval", "writetime", "function"}) {
    if (lower.find(varying) != std::string::npos) return false;
  }
  // Every name called must be a built-in of a fixed answer: a user function
  // (Lua, math.random, a time limit) may answer differently each run.
  static const char* const kFixed[] = {"in", "and", "where", "select", "distinct", "count", "sum", "avg", "min", "max",
                                       "token", "cast", "tojson", "todate", "totimestamp", "tounixtimestamp",
                                       "similarity_cosine", "similarity_euclidean", "similarity_dot_product",
                                       "contains", "key", "of", "by", "limit"};
  for (size_t open = lower.find('('); open != std::string::npos; open = lower.find('(', open + 1)) {
    size_t end = open;
    while (end > 0 && lower[end - 1] == ' ') --end;
    size_t begin = end;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(lower[begin - 1])) || lower[begin - 1] == '_' ||
                         lower[begin - 1] == '.' || lower[begin - 1] == '"')) {
      --begin;
    }
    const std::string name = lower.substr(begin, end - begin);
    if (name.empty()) continue;  // a tuple, a parenthesised term
    const bool fixed = std::any_of(std::begin(kFixed), std::end(kFixed), [&](const char* f) { return name == f; }) ||
                       name.rfind("blobas", 0) == 0 ||
                       (name.size() > 6 && name.compare(name.size() - 6, 6, "asblob") == 0);
    if (!fixed) return false;
  }
  return true;
}

// The deferred answer to `q` equals the plain one (see the properties above).
void CompareDeferred(ConnectionState& conn, const QueryRequest& q, const Reply& plain) {
  std::optional<Reply> deferred;
  harness->deferring->ProcessAsync(conn, q, {}, [&deferred](Reply r) { deferred = std::move(r); });
  if (!deferred) {
    std::fprintf(stderr, "a deferred SELECT answered nothing with every read answered inline: %s\n", q.query.c_str());
    abort();
  }
  fuzz::DecodeReplyOrAbort(*deferred);
  if (deferred->opcode == plain.opcode && deferred->body == plain.body && deferred->warnings == plain.warnings) {
    ++harness->compared;
    return;
  }
  const Reply again = harness->processor->Process(conn, q, {});
  if (again.opcode != plain.opcode || again.body != plain.body || again.warnings != plain.warnings) return;  // it changed meanwhile
  std::fprintf(stderr, "a SELECT answered from deferred reads differs from the plain one: %s (page size %d, %s paging state)\n"
               "  plain:    opcode %d, %zu body bytes, %zu warnings\n  deferred: opcode %d, %zu body bytes, %zu warnings\n",
               q.query.c_str(), q.params.page_size.value_or(0), q.params.paging_state ? "with a" : "no",
               static_cast<int>(plain.opcode), plain.body.size(), plain.warnings.size(),
               static_cast<int>(deferred->opcode), deferred->body.size(), deferred->warnings.size());
  abort();
}

void QueryWithPaging(ConnectionState& conn, const std::string& text, std::mt19937_64& rng) {
  const int32_t sizes[] = {-1, 1, 3, 5000};
  QueryRequest q{text, {}};
  q.params.page_size = sizes[rng() % 4];
  const bool comparable = Comparable(text);
  for (int page = 0; page < 5; ++page) {
    Reply r = Run(conn, q);
    if (comparable) CompareDeferred(conn, q, r);
    if (r.opcode != Opcode::kResult) return;
    auto decoded = DecodeResponse(static_cast<uint8_t>(r.opcode), 0, r.body);
    if (!decoded.ok() || !decoded->rows.paging_state) return;
    std::string state = *decoded->rows.paging_state;
    if (rng() % 4 == 0 && !state.empty()) state[rng() % state.size()] ^= static_cast<char>(1 + rng() % 255);
    if (rng() % 16 == 0) state.resize(rng() % (state.size() + 1));
    q.params.paging_state = state;
  }
}

void Setup() {
  ConnectionState conn;
  for (const char* cql : kSchema) {
    Reply r = harness->processor->Process(conn, QueryRequest{cql, {}}, {});
    if (r.opcode != Opcode::kResult) {
      fprintf(stderr, "schema statement failed: %s\n", cql);
      abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harness = new Harness;
  harness->db = fuzz::OpenScratchDatabase("executor_fuzz");
  harness->coordinator = std::make_unique<Coordinator>(harness->db.get());
  NodeInfo node;
  node.rpc_address = "127.0.0.1";
  harness->traces = std::make_unique<tracing::TraceStore>(node.rpc_address);
  if (!harness->traces->set_probability(0.1).ok()) abort();
  node.traces = harness->traces.get();
  harness->processor = std::make_unique<QueryProcessor>(harness->coordinator.get(), node);
  // User-defined functions on, with a short time limit so that a body that
  // loops costs an input 50 ms, not a second.
  LuaLimits limits;
  limits.timeout_micros = 50'000;
  limits.memory_bytes = 4u << 20;
  harness->processor->EnableUserDefinedFunctions(limits);
  NodeInfo cluster_node;
  cluster_node.rpc_address = node.rpc_address;
  cluster_node.cluster = &harness->no_peers;
  harness->deferring = std::make_unique<QueryProcessor>(harness->coordinator.get(), cluster_node);
  harness->deferring->EnableUserDefinedFunctions(limits);
  Setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Inputs may drop or alter the fixed tables: bring them back, and keep the data small.
  Setup();
  if (harness->inputs % 5000 == 4999) {
    std::fprintf(stderr, "executor fuzzer: %llu inputs, %llu SELECT pages answered alike from deferred reads\n",
                 static_cast<unsigned long long>(harness->inputs + 1), static_cast<unsigned long long>(harness->compared));
  }
  if (++harness->inputs % 2000 == 0) {
    ConnectionState conn;
    for (const char* t : {"every_type", "keys", "ranged", "bucketed", "coll", "wide", "spread", "counts", "fkeys", "viewed"}) {
      harness->processor->Process(conn, QueryRequest{std::string("TRUNCATE fz.") + t, {}}, {});
    }
  }
  ConnectionState conn;
  conn.set_keyspace("fz");
  size_t start = 0;
  for (int n = 0; n < 24 && start < input.size(); ++n) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string line(input.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    std::mt19937_64 rng(Fnv(line));
    if (line.size() > 2 && line[0] == 'P' && line[1] == ' ') {
      PrepareAndExecute(conn, line.substr(2), rng);
    } else {
      QueryWithPaging(conn, line, rng);
    }
  }
  return 0;
}
