#include "tools/server_command.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <memory>

#include "server/node.h"

namespace tessera {
namespace {

bool SplitAddress(const std::string& text, std::string* address, uint16_t* port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return false;
  char* end = nullptr;
  const long p = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535) return false;
  *address = text.substr(0, colon);
  *port = static_cast<uint16_t>(p);
  return true;
}

}  // namespace

int RunServer(const ServerConfig& config) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // delivered to sigwait below, not as interrupts

  server::NodeOptions options;
  options.database.data_dir = config.data_dir;
  options.database.balancer = config.balancer;
  options.database.guardrails = config.guardrails;
  options.database.block_cache_bytes = config.block_cache_bytes;
  options.database.max_successive_merges = config.max_successive_merges;
  auto commitlog_sync = ParseCommitlogSync(config.commitlog_sync);
  if (!commitlog_sync.ok()) {
    spdlog::error("--commitlog-sync: {}", commitlog_sync.status().message());
    return 2;
  }
  options.database.commitlog_sync = *commitlog_sync;
  options.database.commitlog_sync_period_micros = config.commitlog_sync_period_ms * 1000;
  options.database.commitlog_sync_group_window_micros =
      static_cast<int64_t>(config.commitlog_sync_group_window_ms * 1000);
  // A batch or group write waits for its fsync on its thread: those modes
  // need more threads than cores. A cluster coordinator's requests that are
  // not asynchronous yet wait for replicas on their thread: they get 4 per
  // core of their own (--waiting-request-threads), so that the others, which
  // answer from replica answers, keep one thread per core (8 threads on 2
  // cores cost those writes 5-30%, bench/RESULTS.md).
  options.request_threads = config.request_threads >= 0 ? config.request_threads
                            : options.database.commitlog_sync != CommitlogSync::kPeriodic ? 64
                                                                                       : server::DefaultRequestThreads();
  options.waiting_request_threads = config.waiting_request_threads >= 0 ? config.waiting_request_threads
                                    : !config.etcd.empty() ? 4 * server::DefaultRequestThreads()
                                                           : 0;
  options.enable_user_defined_functions = config.enable_user_defined_functions;
  options.keyviz = config.keyviz;
  if (options.keyviz.column_micros < 100'000 || options.keyviz.max_columns < 1 || options.keyviz.max_rows < 1) {
    spdlog::error("--keyviz-column-seconds takes at least 0.1, --keyviz-columns and --keyviz-max-rows at least 1");
    return 2;
  }
  if (!SplitAddress(config.listen, &options.cql_address, &options.cql_port)) {
    spdlog::error("--listen takes address:port, got {}", config.listen);
    return 2;
  }
  if (config.admin_listen == "off") {
    options.admin_port = -1;
  } else {
    uint16_t port = 0;
    if (!SplitAddress(config.admin_listen, &options.admin_address, &port)) {
      spdlog::error("--admin-listen takes address:port or off, got {}", config.admin_listen);
      return 2;
    }
    options.admin_port = port;
  }
  if (Status s = ApplySecurityConfig(config.security, &options); !s.ok()) {
    spdlog::error("{}", s.message());
    return 2;
  }
  options.cluster.etcd_endpoint = config.etcd;
  options.cluster.node_address = config.node_address;
  options.cluster.data_center = config.data_center;
  options.cluster.rack = config.rack;
  options.cluster.lease_ttl_seconds = config.lease_ttl_seconds;
  options.cluster.failure_detector_timeout_ms = config.failure_detector_timeout_ms;
  options.cluster.internode_port = static_cast<uint16_t>(config.internode_port);
  options.cluster.write_timeout_micros = int64_t{config.write_request_timeout_ms} * 1000;
  options.cluster.read_timeout_micros = int64_t{config.read_request_timeout_ms} * 1000;
  options.cluster.max_hint_window_micros = int64_t{config.max_hint_window_seconds} * 1'000'000;
  options.cluster.max_hints_bytes_per_node = uint64_t(config.max_hints_mb) << 20;
  options.cluster.load_report_interval_ms = int64_t{config.load_report_seconds} * 1000;
  options.cluster.placement_balancer = config.placement_balancer;
  options.cluster.placement_balancer_interval_micros = int64_t{config.placement_balancer_interval_ms} * 1000;
  options.cluster.placement_balancer_min_bytes = config.placement_balancer_min_bytes;
  options.cluster.placement_balancer_max_moves_per_node = config.placement_balancer_max_moves_per_node;
  options.cluster.stream_bytes_per_second = config.stream_mib_per_second << 20;
  options.failpoints = config.failpoints;
  if (!config.node_address.empty() && config.node_address != options.cql_address) {
    spdlog::error("--node-address {} differs from the address of --listen {}: drivers reach a node where it listens",
                  config.node_address, options.cql_address);
    return 2;
  }
  auto node = server::Node::Start(options);
  if (!node.ok()) {
    spdlog::error("cannot start on {}: {}", config.data_dir, node.status().ToString());
    return 1;
  }
  Database& db = (*node)->db();
  size_t tablets = 0;
  const auto tables = db.catalog().AllTables();
  for (const auto& t : tables) tablets += db.Tablets(*t).size();
  if ((*node)->admin_port() != 0) {
    spdlog::info("admin HTTP on {}:{} (/metrics, /tablets/split, /tablets/merge, /keyvisualizer)",
                 options.admin_address, (*node)->admin_port());
  }
  if ((*node)->auth()) {
    spdlog::info("authentication on (PasswordAuthenticator{}); change the default superuser's password "
                 "(ALTER ROLE cassandra WITH PASSWORD = '...') before going further",
                 options.auth.authorization ? ", CassandraAuthorizer" : "");
  }
  spdlog::info("tessera server ready: data directory {}, {} keyspaces, {} tables, {} tablets; CQL on {}:{}{}",
               config.data_dir, db.catalog().Keyspaces().size(), tables.size(), tablets, options.cql_address,
               (*node)->cql_port(), config.etcd.empty() ? "" : "; cluster metadata in etcd at " + config.etcd);
  if (config.exit_after_start) return 0;
  spdlog::info("serving until SIGINT or SIGTERM (Ctrl-C)");
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received signal {}, shutting down", sig);
  (*node)->Stop();
  spdlog::info("shutdown complete");
  return 0;
}

}  // namespace tessera
