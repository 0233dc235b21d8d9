#include "tools/demo_cluster.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "client/cql_connection.h"
#include "demo/cluster_report.h"
#include "loader/bulk_loader.h"
#include "tools/demo_common.h"
#include "tools/local_cluster.h"
#include "tools/served_load.h"
#include "types/value_literal.h"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// How an application reads each design back: the newest minutes (a
// dashboard), or the latest requests of the hosts active in the last hour.
enum class ReadShape { kLatestMinutes, kHostPartitions };

struct TableSpec {
  std::string table, design, create;
  ReadShape reads;
};

constexpr char kColumns[] = "(ts timestamp, seq int, host text, method text, url text, response int, bytes int, ";

std::vector<TableSpec> Specs() {
  return {
      {"access_by_time", "timestamp first on a range table: the seeds' hot tail",
       std::string("CREATE TABLE demo.access_by_time ") + kColumns + "PRIMARY KEY (ts, seq)) WITH distribution = 'range'",
       ReadShape::kLatestMinutes},
      {"access_by_host",
       "the seeds' key-order swap: host first, hashed (Cassandra's default) over 8 initial tablets, time clustered "
       "newest first",
       std::string("CREATE TABLE demo.access_by_host ") + kColumns +
           "PRIMARY KEY (host, ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq DESC) AND initial_tablets = 8",
       ReadShape::kHostPartitions},
      {"access_by_time_bucketed",
       "the seeds' hash prefix: timestamp first in 6 buckets (a tablet each at first); a time range reads every "
       "bucket and merges them in time order",
       std::string("CREATE TABLE demo.access_by_time_bucketed ") + kColumns +
           "PRIMARY KEY (ts, seq)) WITH distribution = 'range' AND buckets = 6",
       ReadShape::kLatestMinutes},
  };
}

const std::vector<std::string>& ServerArgs() {
  static const std::vector<std::string> args = {
      "--tablet-balancer=true", "--tablet-balance-interval-seconds=0.25", "--tablet-split-size-bytes=524288",
      "--tablet-split-sustain-seconds=2", "--tablet-merge-min-age-seconds=3600", "--placement-balancer",
      "--placement-balancer-interval-ms=500", "--load-report-seconds=1", "--cluster-lease-seconds=3"};
  return args;
}

struct Endpoint {
  int node = 0;
  std::string address;
  int cql_port = 0, admin_port = 0;
  std::string host_id;  // as text, to find it in system.tablets' replicas
};

// True once SIGINT or SIGTERM (blocked in every thread) is pending.
bool Interrupted(const sigset_t& signals) {
  timespec zero{0, 0};
  return sigtimedwait(&signals, nullptr, &zero) > 0;
}

Result<std::unique_ptr<client::CqlConnection>> Connect(const Endpoint& e) {
  client::ClientOptions o;
  o.host = e.address;
  o.port = static_cast<uint16_t>(e.cql_port);
  return client::CqlConnection::Connect(o);
}

// The first column of every row, formatted.
Result<std::vector<std::string>> Column(client::CqlConnection& conn, const std::string& cql) {
  TESSERA_ASSIGN_OR_RETURN(demo::QueryReport r, AskForReport(conn, "", cql));
  std::vector<std::string> out;
  for (auto& row : r.rows) out.push_back(std::move(row.at(0)));
  return out;
}

// Whole seconds, as CQL parses a timestamp: ValueLiteral's display form
// carries microseconds ('...00.000000+0000'), which CQL (ours, as Cassandra's)
// does not accept.
std::string TimestampLiteral(int64_t millis) {
  const time_t seconds = static_cast<time_t>(millis / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[48];
  std::strftime(buf, sizeof buf, "'%Y-%m-%d %H:%M:%S+0000'", &tm);
  return buf;
}

std::string TextLiteral(const std::string& s) { return ValueLiteral(CqlType::Scalar(TypeKind::kText), s); }

// Every node's served totals of `table`; a node that does not answer keeps
// its `previous` totals (a sample then shows it serving nothing).
std::vector<ServedTotals> ReadAll(const std::vector<Endpoint>& nodes, const std::string& table,
                                  std::vector<ServedTotals> previous) {
  previous.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto totals = ReadServedTotals(nodes[i].address, nodes[i].admin_port, "demo");
    if (!totals.ok()) {
      spdlog::warn("demo: node {}: {}", nodes[i].node, totals.status().ToString());
      continue;
    }
    auto it = totals->find(table);
    previous[i] = it == totals->end() ? ServedTotals{} : it->second;
  }
  return previous;
}

// Samples every node's served writes of one table twice a second until Stop.
class ServedSampler {
 public:
  ServedSampler(const std::vector<Endpoint>& nodes, std::string table)
      : nodes_(nodes), table_(std::move(table)), start_(Clock::now()) {
    first_ = last_ = ReadAll(nodes_, table_, {});
    thread_ = std::thread([this] {
      while (running_.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        Sample();
      }
    });
  }
  // Stops sampling (after one last sample) and returns the totals served since construction.
  std::vector<ServedTotals> Stop() {
    running_ = false;
    thread_.join();
    Sample();
    std::vector<ServedTotals> served(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      served[i].reads = last_[i].reads - first_[i].reads;
      served[i].writes = last_[i].writes - first_[i].writes;
    }
    return served;
  }
  const std::vector<demo::ServedSample>& samples() const { return samples_; }

 private:
  void Sample() {
    auto now = ReadAll(nodes_, table_, last_);
    demo::ServedSample s;
    s.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    for (size_t i = 0; i < nodes_.size(); ++i) s.writes.push_back(now[i].writes - last_[i].writes);
    samples_.push_back(std::move(s));
    last_ = std::move(now);
  }

  const std::vector<Endpoint>& nodes_;
  const std::string table_;
  const Clock::time_point start_;
  std::vector<ServedTotals> first_, last_;
  std::vector<demo::ServedSample> samples_;
  std::atomic<bool> running_{true};
  std::thread thread_;
};

Status Load(const ClusterDemoOptions& o, const Endpoint& coordinator, const TableSpec& spec,
            demo::ClusterTableReport* t) {
  loader::LoadOptions l;
  l.client.host = coordinator.address;
  l.client.port = static_cast<uint16_t>(coordinator.cql_port);
  l.keyspace = "demo";
  l.table = spec.table;
  l.path = NasaAccessLogPath(o.datasets);
  TESSERA_ASSIGN_OR_RETURN(l.format, loader::FormatOfPath(l.path));
  l.mapping = NasaAccessMapping();
  l.timestamp_unit = loader::TimestampUnit::kSeconds;
  l.max_rows_per_second = o.rate;
  l.reject_path = o.report_dir + "/" + spec.table + ".rejects";
  spdlog::info("demo: loading {} into demo.{} at {} rows/s ...", l.path, spec.table, o.rate);
  TESSERA_ASSIGN_OR_RETURN(auto result, loader::RunLoad(l, {}));
  t->loaded = result.loaded;
  t->rejected = result.rejected;
  t->load_seconds = result.seconds;
  return Status::OK();
}

// The read phase: `queries` queries of the table's shape. `latest_millis` is
// the newest timestamp loaded, `hosts` the hosts active in its last hour.
Status ReadBack(client::CqlConnection& conn, const TableSpec& spec, int queries, int64_t latest_millis,
                const std::vector<std::string>& hosts, demo::ClusterTableReport* t) {
  const int64_t minute = 60'000, newest = latest_millis / minute * minute;
  const bool minutes = spec.reads == ReadShape::kLatestMinutes;
  if (!minutes && hosts.empty()) return Status::Corruption("no host was active in the last hour of the log");
  t->read_query = minutes ? "SELECT ts, host, url FROM demo." + spec.table +
                                " WHERE ts >= ? AND ts < ? (one of the last 60 minutes)"
                          : "SELECT ts, url FROM demo." + spec.table +
                                " WHERE host = ? LIMIT 10 (the hosts active in the last hour)";
  for (int i = 0; i < queries; ++i) {
    std::string cql;
    if (minutes) {
      const int64_t from = newest - (i % 60) * minute;
      cql = "SELECT ts, host, url FROM demo." + spec.table + " WHERE ts >= " + TimestampLiteral(from) +
            " AND ts < " + TimestampLiteral(from + minute);
    } else {
      cql = "SELECT ts, url FROM demo." + spec.table + " WHERE host = " + TextLiteral(hosts[i % hosts.size()]) +
            " LIMIT 10";
    }
    TESSERA_RETURN_IF_ERROR(conn.Query(cql).status());
    ++t->read_queries;
  }
  return Status::OK();
}

// Tablets of the table per node, from node 1's placement (system.tablets).
Status CountTablets(client::CqlConnection& conn, const std::string& table, const std::vector<Endpoint>& nodes,
                    demo::ClusterTableReport* t) {
  TESSERA_ASSIGN_OR_RETURN(auto replicas, Column(conn, "SELECT replicas FROM system.tablets WHERE keyspace_name = "
                                                       "'demo' AND table_name = '" + table + "'"));
  t->tablets = replicas.size();
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& list : replicas) t->nodes[i].tablets += list.find(nodes[i].host_id) != std::string::npos;
  }
  return Status::OK();
}

class ClusterDemo {
 public:
  ClusterDemo(const ClusterDemoOptions& o, const sigset_t& signals) : o_(o), signals_(signals) {}
  ~ClusterDemo() {
    if (started_) {
      spdlog::info("demo: stopping the cluster in {}", o_.cluster_dir);
      local_cluster::StopAll(manifest_);
    }
  }

  int Run() {
    if (Status s = StartCluster(); !s.ok()) return Fail(s, s.IsInvalidArgument() ? 2 : 1);
    if (Status s = Prepare(); !s.ok()) return Fail(s);
    for (const auto& spec : Specs()) {
      if (Interrupted(signals_)) return 130;
      if (Status s = RunTable(spec); !s.ok()) return Fail(s);
    }
    if (Status s = Finish(); !s.ok()) return Fail(s);
    if (o_.exit_after_report) return 0;
    spdlog::info("demo: the cluster serves CQL on 127.0.0.1..{}:{} until Ctrl-C (try: tessera shell 127.0.0.1 {}; "
                 "tessera admin status)", o_.nodes, o_.port, o_.port);
    int sig = 0;
    sigwait(&signals_, &sig);
    return 0;
  }

 private:
  int Fail(const Status& s, int code = 1) {
    spdlog::error("demo: {}", s.ToString());
    return code;
  }

  Status StartCluster() {
    if (o_.nodes < 2 || o_.nodes > 254) return Status::InvalidArgument("--nodes takes 2 to 254 for a cluster");
    if (o_.admin_port <= 0) return Status::InvalidArgument("a cluster demo reads each node's admin port: give --admin-port");
    local_cluster::Options lo;
    lo.nodes = o_.nodes;
    lo.dir = o_.cluster_dir;
    lo.port = o_.port;
    lo.admin_port = o_.admin_port;
    lo.internode_port = o_.internode_port;
    lo.etcd_port = o_.etcd_port;
    lo.etcd_peer_port = o_.etcd_peer_port;
    lo.server_args = ServerArgs();
    spdlog::info("demo: starting etcd and {} nodes in {} ...", o_.nodes, o_.cluster_dir);
    Status s = local_cluster::Start(lo, &manifest_);
    if (!s.ok()) return s;
    started_ = true;
    for (const auto& n : manifest_["nodes"]) {
      nodes_.push_back({n.value("node", 0), n.value("address", ""), n.value("cql_port", 0), n.value("admin_port", 0), ""});
    }
    if (static_cast<int>(nodes_.size()) != o_.nodes) {
      return Status::InvalidArgument("the cluster in " + o_.cluster_dir + " has " + std::to_string(nodes_.size()) +
                                     " nodes, not " + std::to_string(o_.nodes) + ": remove the directory or ask for " +
                                     std::to_string(nodes_.size()));
    }
    report_.nodes = o_.nodes;
    report_.etcd = manifest_["etcd"].value("endpoint", "");
    return Status::OK();
  }

  Status Prepare() {
    for (auto& n : nodes_) {
      TESSERA_ASSIGN_OR_RETURN(auto conn, Connect(n));
      TESSERA_ASSIGN_OR_RETURN(auto ids, Column(*conn, "SELECT host_id FROM system.local"));
      if (ids.size() != 1) return Status::Corruption("system.local of node " + std::to_string(n.node) + " has no row");
      n.host_id = ids[0];
    }
    TESSERA_ASSIGN_OR_RETURN(conn_, Connect(nodes_[0]));
    // The demo keyspace starts fresh on every run; other keyspaces are left alone.
    for (const std::string cql :
         {"DROP KEYSPACE IF EXISTS demo",
          "CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}) {
      TESSERA_RETURN_IF_ERROR(conn_->Query(cql).status());
    }
    std::string args;
    for (const auto& a : ServerArgs()) args += (args.empty() ? "" : " ") + a;
    report_.balancer = "every node runs `tessera server " + args + "`; loads limited to " +
                       std::to_string(static_cast<int>(o_.rate)) + " rows/s";
    std::error_code ec;
    std::filesystem::create_directories(o_.report_dir, ec);
    return Status::OK();
  }

  // Waits until every node reports the same schema version (system.local),
  // as drivers do after DDL: a node that has not applied a CREATE TABLE yet
  // fails the writes it should store. At most 30 s.
  Status AwaitSchemaAgreement() {
    std::vector<std::unique_ptr<client::CqlConnection>> conns;
    for (const auto& n : nodes_) {
      TESSERA_ASSIGN_OR_RETURN(auto c, Connect(n));
      conns.push_back(std::move(c));
    }
    for (int i = 0; i < 300; ++i) {
      std::set<std::string> versions;
      for (auto& c : conns) {
        TESSERA_ASSIGN_OR_RETURN(auto v, Column(*c, "SELECT schema_version FROM system.local"));
        versions.insert(v.empty() ? std::string() : v[0]);
      }
      if (versions.size() == 1) return Status::OK();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return Status::IOError("the nodes did not agree on the schema within 30 s");
  }

  Status RunTable(const TableSpec& spec) {
    demo::ClusterTableReport t;
    t.name = "demo." + spec.table;
    t.design = spec.design;
    t.create_cql = spec.create;
    TESSERA_RETURN_IF_ERROR(conn_->Query(spec.create).status());
    TESSERA_RETURN_IF_ERROR(AwaitSchemaAgreement());
    for (const auto& n : nodes_) t.nodes.push_back({n.node, n.address, 0, 0, 0});
    {
      ServedSampler sampler(nodes_, spec.table);
      Status loaded = Load(o_, nodes_[0], spec, &t);
      const auto served = sampler.Stop();
      TESSERA_RETURN_IF_ERROR(loaded);
      for (size_t i = 0; i < nodes_.size(); ++i) t.nodes[i].writes = served[i].writes;
      t.timeline = sampler.samples();
    }
    TESSERA_RETURN_IF_ERROR(LearnTheTail(spec));
    {
      ServedSampler sampler(nodes_, spec.table);
      Status read = ReadBack(*conn_, spec, o_.read_queries, latest_millis_, hosts_, &t);
      const auto served = sampler.Stop();
      TESSERA_RETURN_IF_ERROR(read);
      for (size_t i = 0; i < nodes_.size(); ++i) t.nodes[i].reads = served[i].reads;
    }
    TESSERA_ASSIGN_OR_RETURN(auto counted, AskForInt64(*conn_, "SELECT count(*) FROM demo." + spec.table));
    t.counted = static_cast<uint64_t>(counted);
    TESSERA_RETURN_IF_ERROR(CountTablets(*conn_, spec.table, nodes_, &t));
    demo::SummarizeServed(&t);
    spdlog::info("demo: {} rows into {} in {:.1f} s; the busiest node took {:.0f}% of the writes at each moment; "
                 "{} tablets", t.loaded, t.name, t.load_seconds, 100 * t.busiest_node_write_share, t.tablets);
    report_.tables.push_back(std::move(t));
    return Status::OK();
  }

  // After the first load: the newest timestamp and the hosts of the last hour
  // (with how often each appears), which the read phases and queries use.
  Status LearnTheTail(const TableSpec& spec) {
    if (latest_millis_ != 0) return Status::OK();
    TESSERA_ASSIGN_OR_RETURN(latest_millis_, AskForInt64(*conn_, "SELECT max(ts) FROM demo." + spec.table));
    TESSERA_ASSIGN_OR_RETURN(auto hosts, Column(*conn_, "SELECT host FROM demo." + spec.table + " WHERE ts >= " +
                                                            TimestampLiteral(latest_millis_ - 3'600'000)));
    std::map<std::string, size_t> seen;
    for (auto& h : hosts) {
      if (seen[h]++ == 0) hosts_.push_back(h);
    }
    for (const auto& [host, count] : seen) {
      if (busiest_host_.empty() || count > seen[busiest_host_]) busiest_host_ = host;
    }
    return Status::OK();
  }

  Status Finish() {
    const std::string minute = " WHERE ts >= '1995-08-01 12:00:00+0000' AND ts < '1995-08-01 12:01:00+0000'";
    const std::vector<std::pair<std::string, std::string>> queries = {
        {"The latest 10 requests of the busiest host of the last hour (one partition, newest first)",
         "SELECT ts, method, url, response FROM demo.access_by_host WHERE host = " + TextLiteral(busiest_host_) +
             " LIMIT 10"},
        {"One minute of the log on the timestamp-first table (a key-range scan)",
         "SELECT ts, host, url FROM demo.access_by_time" + minute},
        {"The same minute on the bucketed table (6 buckets read, merged in time order)",
         "SELECT ts, host, url FROM demo.access_by_time_bucketed" + minute},
    };
    for (const auto& [title, cql] : queries) {
      TESSERA_ASSIGN_OR_RETURN(auto q, AskForReport(*conn_, title, cql));
      report_.queries.push_back(std::move(q));
    }
    for (const auto& n : nodes_) {
      TESSERA_ASSIGN_OR_RETURN(auto conn, Connect(n));
      TESSERA_ASSIGN_OR_RETURN(auto events, AskForReport(*conn, "", "SELECT table_name, kind, reason FROM "
                                                                    "system.tablet_events WHERE keyspace_name = 'demo'"));
      for (const auto& row : events.rows) {
        // A node applying a split or merge another node recorded in etcd is no decision of its own.
        if (row[2].find("recorded in etcd by another node") != std::string::npos) continue;
        report_.tablet_events.push_back({"demo." + row[0], row[1], "node " + std::to_string(n.node), row[2]});
      }
    }
    std::ofstream(o_.report_dir + "/report.json") << demo::RenderClusterJson(report_);
    std::ofstream(o_.report_dir + "/report.html") << demo::RenderClusterHtml(report_);
    std::printf("%s\nReport: %s/report.html (and report.json)\n", demo::RenderClusterText(report_).c_str(),
                o_.report_dir.c_str());
    std::fflush(stdout);
    return Status::OK();
  }

  const ClusterDemoOptions& o_;
  sigset_t signals_;
  json manifest_;
  bool started_ = false;
  std::vector<Endpoint> nodes_;
  std::unique_ptr<client::CqlConnection> conn_;  // to node 1, the coordinator of the loads and reads
  int64_t latest_millis_ = 0;
  std::vector<std::string> hosts_;
  std::string busiest_host_;
  demo::ClusterDemoReport report_;
};

}  // namespace

int RunClusterDemo(const ClusterDemoOptions& options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // every thread started later inherits the mask
  ClusterDemo demo(options, signals);
  return demo.Run();
}

}  // namespace tessera
