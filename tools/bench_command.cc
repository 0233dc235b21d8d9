#include "tools/bench_command.h"

#include "tools/client_flags.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>

#include "cql/protocol/requests.h"
#include "workload/runner.h"

namespace tessera {
namespace {

struct BenchFlags {
  workload::WorkloadOptions workload;
  workload::RunOptions run;
  std::string host = "127.0.0.1";
  int port = 9042;
  bool load = false, no_run = false;
  std::string json;
  std::string consistency = "ONE";
  ClientFlags client;
};

int Run(BenchFlags& f) {
  f.run.client.host = f.host;
  f.run.hosts.clear();
  for (size_t start = 0; start <= f.host.size();) {
    const size_t comma = std::min(f.host.find(',', start), f.host.size());
    if (comma > start) f.run.hosts.push_back(f.host.substr(start, comma - start));
    start = comma + 1;
  }
  if (!f.run.hosts.empty()) f.run.client.host = f.run.hosts.front();
  auto level = cql::ConsistencyFromName(f.consistency);
  if (!level) {
    std::fprintf(stderr, "error: unknown consistency level '%s'\n", f.consistency.c_str());
    return 2;
  }
  f.run.consistency = *level;
  f.run.client.port = static_cast<uint16_t>(f.port);
  ApplyClientFlags(f.client, &f.run.client);
  auto w = workload::Workload::Create(f.workload);
  if (!w.ok()) {
    std::fprintf(stderr, "error: %s\n", w.status().message().c_str());
    return 2;
  }
  std::printf("%s | %d connections x %d in flight | %s over %zu node(s)%s%s\n", (*w)->Describe().c_str(),
              f.run.connections, f.run.inflight, cql::ConsistencyName(f.run.consistency), f.run.hosts.size(),
              f.run.hosts.size() > 1 ? (f.run.token_aware ? ", routed by token" : ", not routed by token") : "",
              f.run.target_ops_per_second > 0 ? (" | target " + std::to_string(static_cast<int64_t>(f.run.target_ops_per_second)) + " ops/s").c_str() : "");
  std::vector<workload::RunResult> results;
  if (f.load) {
    auto r = workload::LoadPhase(**w, f.run);
    if (!r.ok()) {
      std::fprintf(stderr, "load failed: %s\n", r.status().ToString().c_str());
      return 1;
    }
    std::printf("%s", workload::FormatText(*r).c_str());
    results.push_back(std::move(*r));
  }
  if (!f.no_run) {
    auto r = workload::RunPhase(**w, f.run);
    if (!r.ok()) {
      std::fprintf(stderr, "run failed: %s\n", r.status().ToString().c_str());
      return 1;
    }
    std::printf("%s", workload::FormatText(*r).c_str());
    results.push_back(std::move(*r));
  }
  if (!f.json.empty()) std::ofstream(f.json) << workload::FormatJson(results, (*w)->Describe(), f.run);
  for (const auto& r : results) {
    if (r.errors > 0) return 1;
  }
  return 0;
}

}  // namespace

CLI::App* AddBenchCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<BenchFlags>();
  auto* cmd = app.add_subcommand("bench", "YCSB workloads A-F and the seeds' scenarios over CQL");
  auto& w = f->workload;
  auto& r = f->run;
  cmd->add_option("--workload", w.name, "a-f, monotonic, swapped, timeseries, latest-n, point-read, write, lwt-insert, lwt-update, counter")
      ->capture_default_str();
  cmd->add_option("--host", f->host, "a node, or several separated by commas (workers' home nodes spread over them)")
      ->capture_default_str();
  cmd->add_option("--consistency", f->consistency, "consistency level of every request (ONE, QUORUM, ALL, ...)")
      ->capture_default_str();
  cmd->add_option("--replication-factor", w.replication_factor, "of the keyspace the workload creates")
      ->check(CLI::Range(1, 16))->capture_default_str();
  cmd->add_option("--port", f->port)->capture_default_str();
  AddClientFlags(cmd, &f->client);
  cmd->add_flag("--load", f->load, "insert recordcount records first (YCSB's load phase)");
  cmd->add_flag("--no-run", f->no_run, "only the load phase");
  cmd->add_option("--recordcount", w.record_count)->capture_default_str();
  cmd->add_option("--operationcount", r.operations, "0: run for --seconds")->capture_default_str();
  cmd->add_option("--seconds", r.seconds)->capture_default_str();
  cmd->add_option("--fieldcount", w.field_count)->capture_default_str();
  cmd->add_option("--fieldlength", w.field_length)->capture_default_str();
  cmd->add_option("--value-bytes", w.value_bytes, "value size of the seeds' scenarios and point-read/write")
      ->capture_default_str();
  cmd->add_option("--requestdistribution", w.distribution, "zipfian, uniform or latest (default: the workload's)");
  cmd->add_option("--readproportion", w.read);
  cmd->add_option("--updateproportion", w.update);
  cmd->add_option("--insertproportion", w.insert);
  cmd->add_option("--scanproportion", w.scan);
  cmd->add_option("--readmodifywriteproportion", w.read_modify_write);
  cmd->add_option("--maxscanlength", w.max_scan_length);
  cmd->add_option("--series", w.series, "partitions of the timeseries and latest-n scenarios")->capture_default_str();
  cmd->add_option("--connections", r.connections, "workers, each with its own connection (one per node when "
                 "routing by token)")->capture_default_str();
  cmd->add_option("--inflight", r.inflight, "requests in flight per worker")->capture_default_str();
  cmd->add_flag("!--no-token-aware", r.token_aware,
                "with several --host nodes, send every request to its home node instead of the node owning its "
                "partition's token (system.local/system.peers tokens)");
  cmd->add_option("--target", r.target_ops_per_second, "ops/s to aim at (0: as fast as possible)")
      ->capture_default_str();
  cmd->add_option("--json", f->json, "also write the results as JSON to this file");
  cmd->callback([f, exit_code] { *exit_code = Run(*f); });
  return cmd;
}

}  // namespace tessera
