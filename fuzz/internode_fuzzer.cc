// libFuzzer target: the internode door, every request another node could
// send (cluster/proto/internode.proto), decoded as the gRPC listener decodes
// it and served by InternodeDispatch (cluster/internode_dispatch.h) on a
// ReplicaService over an in-process database (a fresh data directory), with
// no network in between. Properties:
//  - no crash, no hang, no sanitizer report;
//  - a call's status is one the wire carries (WireStatusCode), and an
//    answer always fits its request (one found flag per key asked, digests of
//    8 bytes, entries within the range asked, at most `limit` of them);
//  - whatever a peer sent, the node still answers its own clients: a CQL
//    read of each table through the executor decodes and is never a
//    ServerError (0x0000); and the Paxos state of each table still exports
//    and a PREPARE on its partitions still answers.
//
// Input: one byte naming the call (its value modulo the 11 calls), one byte
// naming the table (modulo the tables plus one: the last keeps the request's
// own table_uuid), then the request message's protobuf bytes. Seeds:
// TESSERA_INTERNODE_SEEDS=<dir> makes LLVMFuzzerInitialize write a seed per
// call shape, made from the rows the fixed tables hold, and exit
// (scripts/fuzz.sh does this for an empty corpus).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/internode_dispatch.h"
#include "cluster/replica_reads.h"
#include "cluster/replica_service.h"
#include "common/time_uuid.h"
#include "cql/executor/query_processor.h"
#include "db/database.h"
#include "fuzz/fuzz_support.h"
#include "tracing/trace_store.h"

namespace {

using namespace tessera;
using namespace tessera::cql;
namespace pb = tessera::internode;

const char* const kSchema[] = {
    "CREATE KEYSPACE IF NOT EXISTS fz WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TABLE IF NOT EXISTS fz.wide (a int, b int, c text, s int STATIC, l list<int>, m map<text, int>, "
    "PRIMARY KEY ((a), b)) WITH CLUSTERING ORDER BY (b DESC)",
    "CREATE TABLE IF NOT EXISTS fz.ranged (ts timestamp, seq int, v bigint, PRIMARY KEY (ts, seq)) "
    "WITH distribution = 'range'",
    "CREATE TABLE IF NOT EXISTS fz.counts (k text PRIMARY KEY, n counter)",
    "CREATE TABLE IF NOT EXISTS fz.vectors (k int PRIMARY KEY, e vector<float, 3>)",
    "CREATE CUSTOM INDEX IF NOT EXISTS vectors_e ON fz.vectors (e) USING 'StorageAttachedIndex'",
};
const char* const kTables[] = {"wide", "ranged", "counts", "vectors"};
constexpr size_t kTableCount = sizeof(kTables) / sizeof(kTables[0]);
const char* const kRows[] = {
    "INSERT INTO fz.wide (a, b, c, s, l, m) VALUES (1, 1, 'x', 7, [1, 2], {'k': 1})",
    "INSERT INTO fz.wide (a, b, c) VALUES (1, 2, 'y') USING TTL 1000",
    "DELETE FROM fz.wide WHERE a = 2",
    "DELETE c FROM fz.wide WHERE a = 1 AND b = 3",
    "INSERT INTO fz.ranged (ts, seq, v) VALUES ('2026-01-01', 1, 10)",
    "INSERT INTO fz.ranged (ts, seq, v) VALUES ('2026-01-02', 2, 20)",
    "UPDATE fz.counts SET n = n + 5 WHERE k = 'a'",
    "INSERT INTO fz.vectors (k, e) VALUES (1, [0.1, 0.2, 0.3])",
    "INSERT INTO fz.vectors (k, e) VALUES (2, [0.5, 0.5, 0.5])",
};

enum Call : uint8_t {
  kApply, kReadRange, kReadKeys, kDigest, kVectorSearch, kPaxos, kLeadCounterWrite, kExportPaxosState,
  kImportPaxosState, kStoreTrace, kBatch, kCalls
};

struct Harness {
  std::unique_ptr<tracing::TraceStore> traces;
  std::unique_ptr<Database> db;
  std::unique_ptr<Coordinator> coordinator;  // above db: the processors write through it
  std::unique_ptr<QueryProcessor> processor;
  std::unique_ptr<cluster::ReplicaService> replica;
  std::unique_ptr<cluster::InternodeDispatch> dispatch;
  std::vector<std::string> uuids;  // of kTables
  uint64_t inputs = 0;
};

Harness* harness = nullptr;

void Fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  abort();
}

void RunCql(const std::string& statement) {
  ConnectionState conn;
  fuzz::DecodeReplyOrAbort(harness->processor->Process(conn, QueryRequest{statement, {}}, {}));
}

void Setup() {
  for (const char* s : kSchema) RunCql(s);
  harness->uuids.clear();
  for (const char* t : kTables) {
    auto table = harness->db->GetTable("fz", t);
    if (!table.ok()) Fail(std::string("no table fz.") + t);
    harness->uuids.push_back((*table)->uuid);
  }
}

void Refill() {
  for (const char* t : kTables) RunCql(std::string("TRUNCATE fz.") + t);
  for (const char* r : kRows) RunCql(r);
}

void CheckStatus(const Status& s) {
  const int code = cluster::WireStatusCode(s);
  if (code != 0 && code != 3 && code != 5 && code != 13) Fail("a status the wire does not carry: " + s.ToString());
}

// What every answer must be, whatever was asked.
void CheckReadRange(const pb::ReadRangeRequest& r, const Status& s, const pb::ReadRangeReply& reply) {
  CheckStatus(s);
  if (!s.ok()) return;
  if (!reply.digest().empty()) {
    if (reply.digest().size() != 8 || reply.entries_size() != 0) Fail("a window digest that is not 8 bytes alone");
    return;
  }
  // A replica reads at least one key (ReplicaService::ReadRange).
  const uint32_t limit = std::max<uint32_t>(1, r.limit());
  if (static_cast<uint32_t>(reply.entries_size()) > limit) {
    Fail("more entries than the limit: " + std::to_string(reply.entries_size()));
  }
  for (const auto& kv : reply.entries()) {
    if (kv.key() < r.lower() || (!r.upper().empty() && kv.key() >= r.upper())) Fail("an entry outside the range");
  }
  if (reply.key_found_size() != reply.key_values_size() ||
      (reply.key_found_size() != 0 && reply.key_found_size() != r.keys_size())) {
    Fail("point key answers that do not match the keys asked");
  }
}

void CheckReadKeys(const pb::ReadKeysRequest& r, const Status& s, const pb::ReadKeysReply& reply) {
  CheckStatus(s);
  if (!s.ok()) return;
  if (reply.found_size() != r.keys_size() || reply.values_size() != r.keys_size()) {
    Fail("a key read answered " + std::to_string(reply.found_size()) + " of " + std::to_string(r.keys_size()));
  }
  if (r.digest()) {
    for (int i = 0; i < reply.found_size(); ++i) {
      if (reply.found(i) && reply.values(i).size() != 8) Fail("a value digest that is not 8 bytes");
    }
  }
}

// Sets the table of every request in `message` that names one.
template <typename M>
void NameTable(M* message, uint8_t choice) {
  if (choice % (kTableCount + 1) < kTableCount) message->set_table_uuid(harness->uuids[choice % (kTableCount + 1)]);
}

template <typename M>
bool Parse(M* message, std::string_view bytes) {
  return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// Decodes `bytes` as a Request, names its table and hands it to `serve`.
template <typename Request, typename F>
void With(std::string_view bytes, uint8_t table, F serve) {
  Request r;
  if (!Parse(&r, bytes)) return;
  NameTable(&r, table);
  serve(r);
}

void Serve(uint8_t call, uint8_t table, std::string_view bytes) {
  auto& d = *harness->dispatch;
  switch (call % kCalls) {
    case kApply:
      return With<pb::ApplyRequest>(bytes, table, [&](const auto& r) {
        pb::ApplyReply reply;
        CheckStatus(d.Apply(r, reply.mutable_steps()));
      });
    case kReadRange:
      return With<pb::ReadRangeRequest>(bytes, table, [&](const auto& r) {
        pb::ReadRangeReply reply;
        Status s = d.ReadRange(r, &reply);
        CheckReadRange(r, s, reply);
      });
    case kReadKeys:
      return With<pb::ReadKeysRequest>(bytes, table, [&](const auto& r) {
        pb::ReadKeysReply reply;
        Status s = d.ReadKeys(r, &reply);
        CheckReadKeys(r, s, reply);
      });
    case kDigest:
      return With<pb::DigestRequest>(bytes, table, [&](const auto& r) {
        pb::DigestReply reply;
        CheckStatus(d.Digest(r, &reply));
      });
    case kVectorSearch:
      return With<pb::VectorSearchRequest>(bytes, table, [&](const auto& r) {
        pb::VectorSearchReply reply;
        Status s = d.VectorSearch(r, &reply);
        CheckStatus(s);
        if (s.ok() && static_cast<uint32_t>(reply.keys_size()) > r.k()) Fail("more neighbours than k");
      });
    case kPaxos:
      return With<pb::PaxosRequest>(bytes, table, [&](const auto& r) {
        pb::PaxosReply reply;
        CheckStatus(d.Paxos(r, &reply));
      });
    case kLeadCounterWrite:
      return With<pb::CounterWriteRequest>(bytes, table, [&](const auto& r) {
        pb::CounterWriteReply reply;
        CheckStatus(d.LeadCounterWrite(r, &reply));
      });
    case kExportPaxosState:
      return With<pb::PaxosStateRequest>(bytes, table, [&](const auto& r) {
        pb::PaxosStateRows reply;
        CheckStatus(d.ExportPaxosState(r, &reply));
      });
    case kImportPaxosState:
      return With<pb::PaxosStateRows>(bytes, table, [&](const auto& r) { CheckStatus(d.ImportPaxosState(r)); });
    case kStoreTrace: {
      pb::TraceSession r;
      if (Parse(&r, bytes)) d.StoreTrace(r);
      return;
    }
    case kBatch: {
      pb::BatchRequest r;
      if (!Parse(&r, bytes)) return;
      for (auto& a : *r.mutable_applies()) NameTable(&a, table);
      for (auto& k : *r.mutable_reads()) NameTable(&k, table);
      pb::BatchReply reply;
      d.Batch(r, &reply);
      if (reply.applies_size() != r.applies_size() || reply.reads_size() != r.reads_size()) {
        Fail("a batch answered a different number of calls than it carried");
      }
      for (int i = 0; i < r.reads_size(); ++i) {
        const auto& result = reply.reads(i);
        if (result.status().code() == 0) CheckReadKeys(r.reads(i), Status::OK(), result.reply());
      }
      return;
    }
  }
}

// --- Seeds: one input per call shape, from the rows the tables hold. ---

void WriteSeed(const std::string& dir, int n, Call call, uint8_t table, const google::protobuf::Message& m) {
  std::string bytes;
  bytes.push_back(static_cast<char>(call));
  bytes.push_back(static_cast<char>(table));
  bytes += m.SerializeAsString();
  std::ofstream(dir + "/seed_" + std::to_string(n), std::ios::binary) << bytes;
}

void WriteSeeds(const std::string& dir) {
  int n = 0;
  for (uint8_t t = 0; t < kTableCount; ++t) {
    cluster::RangeQuery all;
    all.table_uuid = harness->uuids[t];
    all.internal = true;
    auto rows = harness->replica->ReadRange(all);
    if (!rows.ok()) Fail("seeds: " + rows.status().ToString());
    const auto& entries = rows->entries;
    pb::ApplyRequest apply;
    for (const auto& [k, v] : entries) {
      auto* op = apply.add_ops();
      op->set_key(k);
      op->set_value(v);
    }
    WriteSeed(dir, n++, kApply, t, apply);
    if (!entries.empty()) {
      pb::ApplyRequest erase;
      auto* op = erase.add_ops();
      op->set_kind(pb::WriteOp::DELETE_RANGE);
      op->set_key(entries.front().first);
      op->set_value(entries.back().first);
      erase.set_trace(true);
      WriteSeed(dir, n++, kApply, t, erase);
    }
    for (int shape = 0; shape < 4; ++shape) {
      pb::ReadRangeRequest range;
      range.set_limit(shape == 0 ? 512 : 2);
      range.set_reverse(shape >= 2);
      range.set_from_end(shape == 3);
      range.set_digest(shape == 1);
      range.set_trace(shape == 2);
      if (entries.size() > 1) {
        range.set_lower(entries[1].first);
        range.set_from(entries[1].first);
        range.add_keys(entries[0].first);  // a point key below the range, as a slice's header
      }
      WriteSeed(dir, n++, kReadRange, t, range);
    }
    for (bool digest : {false, true}) {
      pb::ReadKeysRequest keys;
      for (const auto& [k, v] : entries) keys.add_keys(k);
      keys.add_keys("absent");
      keys.set_digest(digest);
      WriteSeed(dir, n++, kReadKeys, t, keys);
    }
    pb::DigestRequest digest;
    WriteSeed(dir, n++, kDigest, t, digest);
    pb::CounterWriteRequest counter;
    for (const auto& [k, v] : entries) {
      auto* op = counter.add_ops();
      op->set_key(k);
      op->set_value(v);
    }
    WriteSeed(dir, n++, kLeadCounterWrite, t, counter);
    if (!entries.empty()) {
      const std::string ballot = NewTimeUuid();
      for (auto phase : {pb::PaxosRequest::PREPARE, pb::PaxosRequest::PROPOSE, pb::PaxosRequest::COMMIT}) {
        pb::PaxosRequest paxos;
        paxos.set_phase(phase);
        paxos.set_partition(entries.front().first.substr(0, entries.front().first.size() / 2));
        paxos.set_ballot(ballot);
        auto* op = paxos.add_update();
        op->set_key(entries.front().first);
        op->set_value(entries.front().second);
        WriteSeed(dir, n++, kPaxos, t, paxos);
      }
    }
    pb::PaxosStateRequest state;
    WriteSeed(dir, n++, kExportPaxosState, t, state);
    // Real rows to import: a proposal accepted here (the seeds above, run),
    // exported as a migration carries it.
    if (!entries.empty()) {
      pb::PaxosRequest propose;
      propose.set_phase(pb::PaxosRequest::PROPOSE);
      propose.set_table_uuid(harness->uuids[t]);
      propose.set_partition(entries.front().first.substr(0, entries.front().first.size() / 2));
      propose.set_ballot(NewTimeUuid());
      auto* op = propose.add_update();
      op->set_key(entries.front().first);
      op->set_value(entries.front().second);
      pb::PaxosReply accepted;
      if (!harness->dispatch->Paxos(propose, &accepted).ok()) Fail("seeds: a proposal was refused");
    }
    state.set_table_uuid(harness->uuids[t]);
    pb::PaxosStateRows import;
    if (!harness->dispatch->ExportPaxosState(state, &import).ok()) Fail("seeds: no Paxos state to export");
    import.clear_table_uuid();
    WriteSeed(dir, n++, kImportPaxosState, t, import);
    pb::BatchRequest batch;
    *batch.add_applies() = apply;
    pb::ReadKeysRequest keys;
    for (const auto& [k, v] : entries) keys.add_keys(k);
    *batch.add_reads() = keys;
    WriteSeed(dir, n++, kBatch, t, batch);
  }
  pb::VectorSearchRequest search;
  search.set_index("vectors_e");
  for (float x : {0.1f, 0.2f, 0.3f}) search.add_query(x);
  search.set_k(2);
  search.add_lowers("");
  search.add_uppers("");
  WriteSeed(dir, n++, kVectorSearch, 3, search);
  pb::TraceSession trace;
  trace.set_session_id(NewTimeUuid());
  trace.set_command("QUERY");
  auto* step = trace.add_events();
  step->set_event_id(NewTimeUuid());
  step->set_activity("Parsing a statement");
  WriteSeed(dir, n++, kStoreTrace, static_cast<uint8_t>(kTableCount), trace);
  std::printf("%d seeds written to %s\n", n, dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harness = new Harness;
  harness->db = fuzz::OpenScratchDatabase("internode_fuzz");
  harness->coordinator = std::make_unique<Coordinator>(harness->db.get());
  NodeInfo node;
  node.rpc_address = "127.0.0.1";
  harness->traces = std::make_unique<tracing::TraceStore>(node.rpc_address);
  node.traces = harness->traces.get();
  harness->processor = std::make_unique<QueryProcessor>(harness->coordinator.get(), node);
  harness->replica = std::make_unique<cluster::ReplicaService>(harness->db.get(), std::string(16, '\x01'));
  harness->replica->set_trace_store(harness->traces.get());
  harness->dispatch = std::make_unique<cluster::InternodeDispatch>(harness->replica.get());
  Setup();
  Refill();
  if (const char* dir = std::getenv("TESSERA_INTERNODE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

// Whatever a peer sent, the Paxos state of every table still exports, and a
// round on its partitions can still begin: a PREPARE answers (promised or
// not) instead of failing on a stored row or update that does not decode.
void CheckPaxosState() {
  for (const std::string& uuid : harness->uuids) {
    pb::PaxosStateRequest all;
    all.set_table_uuid(uuid);
    pb::PaxosStateRows rows;
    Status exported = harness->dispatch->ExportPaxosState(all, &rows);
    if (!exported.ok()) Fail("the Paxos state no longer exports: " + exported.ToString());
    for (int i = 0; i < rows.rows_size() && i < 4; ++i) {
      pb::PaxosRequest prepare;
      prepare.set_phase(pb::PaxosRequest::PREPARE);
      prepare.set_table_uuid(uuid);
      prepare.set_partition(rows.rows(i).key());
      prepare.set_ballot(NewTimeUuid());
      pb::PaxosReply reply;
      Status s = harness->dispatch->Paxos(prepare, &reply);
      if (!s.ok()) Fail("a PREPARE on a stored partition failed: " + s.ToString());
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 16384) return 0;
  if (++harness->inputs % 1000 == 0) Refill();  // keep the tables small
  Serve(data[0], data[1], std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2));
  // Whatever a peer sent, this node's clients still read every table.
  for (const char* t : kTables) RunCql(std::string("SELECT * FROM fz.") + t + " LIMIT 20");
  CheckPaxosState();
  return 0;
}
