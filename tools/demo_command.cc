#include "tools/demo_command.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "db/key_advice.h"
#include "demo/report.h"
#include "demo/tablet_timeline.h"
#include "keys/storage_key.h"
#include "loader/bulk_loader.h"
#include "server/node.h"
#include "tools/demo_cluster.h"
#include "tools/demo_common.h"
#include "types/value_literal.h"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

// The default "demo/datasets" is relative to the repository root; run from
// elsewhere, it is found beside the executable (build/<mode>/tools/tessera ->
// the repository's demo/datasets) or in the source tree the binary was built from.
std::string FindDatasets(const std::string& given) {
  namespace fs = std::filesystem;
  if (given != "demo/datasets" || fs::exists(given)) return given;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      if (fs::exists(dir / given)) return (dir / given).string();
    }
  }
  const fs::path source = fs::path(TESSERA_SOURCE_DIR) / given;
  return fs::exists(source) ? source.string() : given;
}

struct DemoFlags {
  std::string data_dir = "./data";
  std::string datasets = "demo/datasets";
  std::string report_dir = "./report";
  uint16_t port = 9042;
  int admin_port = 9180;
  double rate = 8000;
  bool exit_after_report = false;
  int nodes = 1;                // 2 or more: the demo on a local cluster (tools/demo_cluster.h)
  int internode_port = 7000;    // cluster only
  int etcd_port = 2379;         // cluster only
  int etcd_peer_port = 0;       // cluster only; 0: etcd_port + 1
  // Finer than the server's minute, since each load takes seconds: 0.5 s columns for 30 minutes,
  // and 100 rows a column (the demo's tables have a few dozen tablets): a 40 MB bound.
  double keyviz_column_seconds = 0.5;
  BalancerOptions balancer = [] {
    BalancerOptions b;
    b.enabled = true;
    b.interval_micros = 250'000;      // a few rounds per second: the loads take seconds
    b.split_size_bytes = 512 << 10;   // small tablets, so that a few MB of real data spread over several
    b.split_sustain_micros = 2'000'000;
    b.merge_min_age_micros = 3'600'000'000;  // no merges while the report is made
    return b;
  }();
};

struct LoadSpec {
  std::string table, design, create, file;
  std::vector<loader::ColumnMapping> mapping;
  loader::TimestampUnit unit = loader::TimestampUnit::kMilliseconds;
  double rate = 0;
};

std::vector<LoadSpec> Specs(const DemoFlags& f) {
  const std::string nasa = NasaAccessLogPath(f.datasets);
  const std::vector<loader::ColumnMapping> access = NasaAccessMapping();
  return {
      {"access_by_time", "timestamp first on a range table: the seeds' UserAccessLog hotspot",
       "CREATE TABLE demo.access_by_time (ts timestamp, seq int, host text, method text, url text, response int, "
       "bytes int, PRIMARY KEY (ts, seq)) WITH distribution = 'range'",
       nasa, access, loader::TimestampUnit::kSeconds, f.rate},
      {"access_by_host", "the seeds' fix: key order swapped, host first, time clustered newest first",
       "CREATE TABLE demo.access_by_host (host text, ts timestamp, seq int, method text, url text, response int, "
       "bytes int, PRIMARY KEY (host, ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq DESC) "
       "AND distribution = 'range'",
       nasa, access, loader::TimestampUnit::kSeconds, f.rate},
      {"access_by_time_auto",
       "timestamp first on a range table WITH buckets = 'auto': the database adds the seeds' hash prefix itself "
       "once the tail is hot, and reads merge the buckets in time order",
       "CREATE TABLE demo.access_by_time_auto (ts timestamp, seq int, host text, method text, url text, "
       "response int, bytes int, PRIMARY KEY (ts, seq)) WITH distribution = 'range' AND buckets = 'auto'",
       nasa, access, loader::TimestampUnit::kSeconds, f.rate},
      {"metrics", "monitoring: (metric, source) partitions, time clustered newest first, hashed",
       "CREATE TABLE demo.metrics (metric text, source text, ts timestamp, seq int, value double, "
       "PRIMARY KEY ((metric, source), ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq ASC)",
       f.datasets + "/nab/nab_real_long.csv.gz",
       {{"metric", "metric"}, {"source", "source"}, {"ts", "timestamp"}, {"seq", "@line"}, {"value", "value"}},
       loader::TimestampUnit::kMilliseconds, 0},
  };
}

Status Run(client::CqlConnection& conn, const std::string& cql) { return conn.Query(cql).status(); }

// Whether the bucketed table's minute came back as the unbucketed table's: the same rows in the same order.
std::string TimeOrderCheck(const demo::QueryReport& plain, const demo::QueryReport& bucketed) {
  const bool same = plain.rows == bucketed.rows;
  const bool ordered = std::is_sorted(bucketed.rows.begin(), bucketed.rows.end(),
                                      [](const auto& a, const auto& b) { return a[0] < b[0]; });
  return "Time order: the one-minute query returned " + std::to_string(bucketed.rows.size()) + " rows from " +
         "demo.access_by_time_auto, " + (same ? "the same rows in the same order as" : "NOT the same rows as") +
         " the " + std::to_string(plain.rows.size()) + " of demo.access_by_time; timestamps " +
         (ordered ? "ascending" : "NOT ascending") + ".";
}

void MergeAdvice(std::vector<KeyAdvice> found, std::vector<KeyAdvice>* all) {
  for (auto& a : found) {
    if (a.keyspace != "demo") continue;
    auto same = std::find_if(all->begin(), all->end(), [&](const KeyAdvice& b) {
      return a.table == b.table && a.kind == b.kind && a.subject == b.subject;
    });
    if (same == all->end()) all->push_back(std::move(a));
  }
}

Result<demo::TableReport> LoadOne(server::Node& node, const LoadSpec& spec, uint16_t port,
                                  const std::string& reject_path, std::vector<KeyAdvice>* advice) {
  demo::TableReport t;
  t.name = "demo." + spec.table;
  t.design = spec.design;
  t.create_cql = spec.create;
  t.source_file = spec.file;
  TESSERA_ASSIGN_OR_RETURN(auto schema, node.db().GetTable("demo", spec.table));
  demo::TabletTimeline timeline(&node.db(), schema);
  const int64_t started_micros = node.db().NowMicros();
  std::atomic<bool> loading{true};
  const auto start = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  timeline.Sample(0);
  std::thread sampler([&] {
    while (loading.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      timeline.Sample(seconds());
    }
  });
  loader::LoadOptions o;
  o.client.port = port;
  o.keyspace = "demo";
  o.table = spec.table;
  o.path = spec.file;
  auto format = loader::FormatOfPath(spec.file);
  if (!format.ok()) {
    loading = false;
    sampler.join();
    return format.status();
  }
  o.format = *format;
  o.mapping = spec.mapping;
  o.timestamp_unit = spec.unit;
  o.max_rows_per_second = spec.rate;
  o.reject_path = reject_path;
  spdlog::info("demo: loading {} into {} ...", spec.file, t.name);
  auto result = loader::RunLoad(o, {});
  loading = false;
  sampler.join();
  timeline.Sample(seconds());
  TESSERA_RETURN_IF_ERROR(result.status());
  // Advice comes from live load: ask while this table's writes are recent.
  MergeAdvice(ComputeKeyAdvice(node.db()), advice);
  t.file_rows = result->records;
  t.loaded = result->loaded;
  t.rejected = result->rejected;
  t.load_seconds = result->seconds;
  t.tablets = node.db().Tablets(*schema).size();
  t.distribution = timeline.Distribution();
  t.timeline = timeline.samples();
  for (const auto& e : node.db().TabletEvents()) {
    if (e.table_id != schema->id || e.kind != "buckets" || t.bucket_raise_seconds >= 0) continue;
    t.bucket_raise_seconds = static_cast<double>(e.at_micros - started_micros) / 1e6;
    const size_t cut = e.reason.find("under a tail hotspot");
    t.bucket_raise = cut == std::string::npos ? e.reason : e.reason.substr(0, cut + 20);
    t.after_raise = timeline.Distribution(t.bucket_raise_seconds);
  }
  spdlog::info("demo: {} rows into {} in {:.1f} s, {} rejected, {} tablets", t.loaded, t.name, t.load_seconds,
               t.rejected, t.tablets);
  return t;
}

int RunDemo(const DemoFlags& f) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  server::NodeOptions options;
  options.database.data_dir = f.data_dir;
  options.database.balancer = f.balancer;
  options.cql_port = f.port;
  options.admin_port = f.admin_port;
  options.keyviz.column_micros = static_cast<int64_t>(f.keyviz_column_seconds * 1e6);
  options.keyviz.max_columns = 3600;
  options.keyviz.max_rows = 100;
  auto node = server::Node::Start(options);
  if (!node.ok()) {
    spdlog::error("cannot start the node: {}", node.status().ToString());
    return 1;
  }
  const uint16_t port = (*node)->cql_port();
  spdlog::info("demo: node up, CQL on 127.0.0.1:{}", port);
  auto fail = [](const Status& s) {
    spdlog::error("demo: {}", s.ToString());
    return 1;
  };
  client::ClientOptions co;
  co.port = port;
  auto conn = client::CqlConnection::Connect(co);
  if (!conn.ok()) return fail(conn.status());
  client::CqlConnection& c = **conn;
  // The demo keyspace starts fresh on every run; other keyspaces are left alone.
  for (const std::string cql :
       {"DROP KEYSPACE IF EXISTS demo",
        "CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}) {
    if (Status s = Run(c, cql); !s.ok()) return fail(s);
  }
  demo::DemoReport report;
  if ((*node)->admin_port() != 0) {
    report.keyviz_url = "http://127.0.0.1:" + std::to_string((*node)->admin_port()) + "/keyvisualizer";
    spdlog::info("demo: live Key Visualizer on {}", report.keyviz_url);
  }
  char balancer[256];
  std::snprintf(balancer, sizeof balancer,
                "split above %llu KiB or %.0f rows/s sustained %.0f s, a round every %.2f s; loads of the access "
                "log limited to %.0f rows/s",
                static_cast<unsigned long long>(f.balancer.split_size_bytes >> 10), f.balancer.split_rows_per_second,
                f.balancer.split_sustain_micros / 1e6, f.balancer.interval_micros / 1e6, f.rate);
  report.balancer = balancer;
  std::error_code ec;
  std::filesystem::create_directories(f.report_dir, ec);
  for (const auto& spec : Specs(f)) {
    if (Status s = Run(c, spec.create); !s.ok()) return fail(s);
    auto t = LoadOne(**node, spec, port, f.report_dir + "/" + spec.table + ".rejects", &report.key_advice);
    if (!t.ok()) return fail(t.status());
    auto counted = AskForInt64(c, "SELECT count(*) FROM demo." + spec.table);
    if (!counted.ok()) return fail(counted.status());
    t->counted = static_cast<uint64_t>(*counted);
    report.tables.push_back(std::move(*t));
  }
  // The seeds' queries.
  Database& db = (*node)->db();
  uint64_t total = 0;
  std::string busiest_host = "'piweba3y.prodigy.com'";
  if (auto table = db.GetTable("demo", "access_by_host"); table.ok()) {
    auto top = db.HotPartitions(**table, /*writes=*/true, 1, &total);
    if (!top.empty()) busiest_host = PartitionKeyLiteral(**table, top[0].partition_key);
  }
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"The latest 10 requests of the busiest host (one partition, newest first)",
       "SELECT ts, method, url, response FROM demo.access_by_host WHERE host = " + busiest_host + " LIMIT 10"},
      {"One minute of the log on the timestamp-first table (a key-range scan)",
       "SELECT ts, host, url FROM demo.access_by_time WHERE ts >= '1995-08-01 12:00:00+0000' "
       "AND ts < '1995-08-01 12:01:00+0000'"},
      {"The same minute on the timestamp-first table WITH buckets = 'auto' (every bucket read, merged in time order)",
       "SELECT ts, host, url FROM demo.access_by_time_auto WHERE ts >= '1995-08-01 12:00:00+0000' "
       "AND ts < '1995-08-01 12:01:00+0000'"},
      {"The busiest host between 12:00 and 13:00 (a slice of one partition)",
       "SELECT ts, url FROM demo.access_by_host WHERE host = " + busiest_host +
           " AND ts >= '1995-08-01 12:00:00+0000' AND ts < '1995-08-01 13:00:00+0000'"},
      {"One hour of one metric series (a slice of one partition)",
       "SELECT ts, value FROM demo.metrics WHERE metric = 'realKnownCause' AND "
       "source = 'machine_temperature_system_failure' AND ts >= '2013-12-10 00:00:00+0000' "
       "AND ts < '2013-12-10 01:00:00+0000'"},
      {"The latest point of every series (PER PARTITION LIMIT)",
       "SELECT metric, source, ts, value FROM demo.metrics PER PARTITION LIMIT 1"},
  };
  for (const auto& [title, cql] : queries) {
    auto q = AskForReport(c, title, cql);
    if (!q.ok()) return fail(q.status());
    report.queries.push_back(std::move(*q));
  }
  report.time_order = TimeOrderCheck(report.queries[1], report.queries[2]);
  for (const auto& t : db.catalog().Tables("demo")) {
    uint64_t writes_total = 0;
    for (const auto& h : db.HotPartitions(*t, true, 3, &writes_total)) {
      char detail[96];
      std::snprintf(detail, sizeof detail, "%llu row writes (%.1f%% of %llu)",
                    static_cast<unsigned long long>(h.count), writes_total ? 100.0 * h.count / writes_total : 0.0,
                    static_cast<unsigned long long>(writes_total));
      report.hot_partitions.push_back({"demo." + t->name, "writes", PartitionKeyLiteral(*t, h.partition_key), detail});
    }
  }
  for (const auto& e : db.TabletEvents()) {
    auto t = db.catalog().GetTableById(e.table_id);
    if (t && t->keyspace == "demo") report.tablet_events.push_back({"demo." + t->name, e.kind, "", e.reason});
  }
  std::ofstream(f.report_dir + "/report.json") << demo::RenderJson(report);
  std::ofstream(f.report_dir + "/report.html") << demo::RenderHtml(report);
  std::printf("%s\nReport: %s/report.html (and report.json)\n", demo::RenderText(report).c_str(),
              f.report_dir.c_str());
  std::fflush(stdout);
  if (f.exit_after_report) return 0;
  spdlog::info("demo: serving CQL on 127.0.0.1:{} until Ctrl-C (try: tessera shell 127.0.0.1 {})", port, port);
  int sig = 0;
  sigwait(&signals, &sig);
  (*node)->Stop();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace

CLI::App* AddDemoCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<DemoFlags>();
  auto* cmd = app.add_subcommand("demo", "load the real datasets in three key designs, report, and keep serving");
  cmd->add_option("--data-dir", f->data_dir, "data directory")->capture_default_str();
  cmd->add_option("--datasets", f->datasets, "folder holding nasa_http/ and nab/")->capture_default_str();
  cmd->add_option("--report-dir", f->report_dir, "where report.html and report.json go")->capture_default_str();
  cmd->add_option("--port", f->port, "CQL port on 127.0.0.1 (0: any free port)")->capture_default_str();
  cmd->add_option("--admin-port", f->admin_port, "admin HTTP port on 127.0.0.1 (-1: none)")->capture_default_str();
  cmd->add_option("--keyviz-column-seconds", f->keyviz_column_seconds, "Key Visualizer: seconds per time column")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  auto* rate = cmd->add_option("--rate", f->rate, "rows per second when loading the access log (cluster: 2500)")
                   ->capture_default_str();
  cmd->add_flag("--exit-after-report", f->exit_after_report, "stop after the report instead of serving");
  cmd->add_option("--nodes", f->nodes,
                  "1: one embedded node; N >= 2: etcd and N nodes on 127.0.0.1..N started in DATA_DIR/cluster, "
                  "replication factor 1, the report per node")
      ->check(CLI::Range(1, 254))
      ->capture_default_str();
  cmd->add_option("--internode-port", f->internode_port, "cluster: internode (gRPC) port of every node")
      ->capture_default_str();
  cmd->add_option("--etcd-port", f->etcd_port, "cluster: etcd client port on 127.0.0.1")
      ->capture_default_str();
  cmd->add_option("--etcd-peer-port", f->etcd_peer_port, "cluster: etcd peer port (default: the client port + 1)");
  cmd->callback([f, exit_code, rate] {
    f->datasets = FindDatasets(f->datasets);
    if (f->nodes == 1) {
      *exit_code = RunDemo(*f);
      return;
    }
    ClusterDemoOptions o;
    o.nodes = f->nodes;
    o.cluster_dir = f->data_dir + "/cluster";
    o.datasets = f->datasets;
    o.report_dir = f->report_dir;
    o.port = f->port;
    o.admin_port = f->admin_port;
    o.internode_port = f->internode_port;
    o.etcd_port = f->etcd_port;
    o.etcd_peer_port = f->etcd_peer_port;
    if (rate->count() > 0) o.rate = f->rate;
    o.exit_after_report = f->exit_after_report;
    *exit_code = RunClusterDemo(o);
  });
  return cmd;
}

}  // namespace tessera
