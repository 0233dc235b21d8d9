// Runner: executes a Workload over CQL — `connections` workers, each on its
// own thread keeping up to `inflight` prepared requests outstanding, on one
// connection, or with token routing one per node — and measures
// throughput and latency per operation type (LatencyRecorder).
//
// Latency is measured from the moment a request was due: with a target
// rate, requests are scheduled at fixed intervals per connection and a late
// send counts its delay (no coordinated omission, as YCSB's "intended"
// latencies); without one, from the send. A read-modify-write is its read
// and its update, back to back, timed as one operation.
//
// Thread safety: Run is reentrant; it starts and joins its own threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "client/cql_connection.h"
#include "workload/latency_recorder.h"
#include "workload/workload.h"

namespace tessera::workload {

struct RunOptions {
  client::ClientOptions client;
  int connections = 4;
  int inflight = 16;
  int64_t operations = 0;     // 0: run for `seconds`
  double seconds = 10;
  double target_ops_per_second = 0;  // 0: as fast as possible (closed loop)
  cql::Consistency consistency = cql::Consistency::kOne;  // of every EXECUTE
  // Worker i's home node is hosts[i % size] (client.host when empty): spreads
  // the coordinators over a cluster's nodes.
  std::vector<std::string> hosts;
  // With several hosts, each worker also connects to every other one and
  // sends each request to the node owning its partition's token
  // (workload/token_ring.h), as the drivers' token-aware policies do; its
  // `inflight` bound covers all its connections. False: home node only.
  bool token_aware = true;
};

struct OpStats {
  LatencyRecorder latency;
  uint64_t errors = 0;
};

struct RunResult {
  std::string phase;  // "load" or "run"
  double seconds = 0;
  uint64_t operations = 0, errors = 0;
  std::map<std::string, OpStats> by_op;  // OpName -> stats
  LatencyRecorder all;
  std::string first_error;
  bool token_aware = false;  // requests were routed by token
  double routed_share = 0;   // of requests, those sent to a node other than the worker's home
  double ops_per_second() const { return seconds > 0 ? static_cast<double>(operations) / seconds : 0; }
};

// Creates the schema and inserts records [0, record_count). Errors: setup
// failures (connect, DDL, prepare); per-request errors are counted.
Result<RunResult> LoadPhase(const Workload& workload, const RunOptions& options);
// Runs the workload's operation mix.
Result<RunResult> RunPhase(const Workload& workload, const RunOptions& options);

std::string FormatText(const RunResult& r);
std::string FormatJson(const std::vector<RunResult>& results, const std::string& description,
                       const RunOptions& options);

}  // namespace tessera::workload
