// `tessera server`: opens the embedded database (alone, or as a member of a
// cluster when given --etcd) with its tablet
// balancer, serves CQL (native protocol v4) on the listen address and the
// admin HTTP port (metrics, manual split and merge, the Key Visualizer) until SIGINT or SIGTERM,
// then stops the listeners and closes the database cleanly.
#pragma once

#include <string>

#include "db/database.h"
#include "keyviz/history.h"
#include "server/cql_server.h"
#include "tools/security_options.h"

namespace tessera {

struct ServerConfig {
  std::string data_dir = "./data";
  std::string listen = "127.0.0.1:9042";        // address:port of the CQL listener
  std::string admin_listen = "127.0.0.1:9180";  // address:port of the admin HTTP port; "off" disables it
  bool exit_after_start = false;  // open, report, close: used by tests
  size_t block_cache_bytes = 0;                 // RocksDB block cache of data blocks; 0: a quarter of memory
  size_t max_successive_merges = 16;            // StorageOptions::max_successive_merges
  std::string commitlog_sync = "periodic";      // StorageOptions::commitlog_sync: periodic, batch or group
  int64_t commitlog_sync_period_ms = 10000;
  double commitlog_sync_group_window_ms = 15;
  bool enable_user_defined_functions = false;  // NodeOptions::enable_user_defined_functions
  int request_threads = -1;  // NodeOptions::request_threads; -1: one per core, 64 for batch and group durability
  int waiting_request_threads = -1;  // NodeOptions::waiting_request_threads; -1: 4 per core in a cluster, else 0
  // Tablet balancer (enabled by default in the server) and guardrails; the
  // defaults are documented in tablets/balancer_policy.h and db/guardrails.h.
  BalancerOptions balancer = [] {
    BalancerOptions o;
    o.enabled = true;
    return o;
  }();
  Guardrails guardrails;
  keyviz::KeyVizOptions keyviz;  // the Key Visualizer's columns (keyviz/history.h)
  SecurityConfig security;       // authentication, authorization, TLS, limits
  // Cluster membership: with an etcd endpoint the server joins (or forms)
  // the cluster registered there; without, it is the embedded single node.
  std::string etcd;              // http://host:port of etcd's client URL
  std::string node_address;      // this node's address as peers and drivers see it (default: --listen's)
  std::string data_center = "datacenter1";
  std::string rack = "rack1";
  int lease_ttl_seconds = 5;
  int64_t failure_detector_timeout_ms = 2000;
  int internode_port = 7000;             // gRPC port of internode requests, on the node's address
  int write_request_timeout_ms = 2000;   // Cassandra's write_request_timeout
  int read_request_timeout_ms = 5000;    // Cassandra's read_request_timeout
  int max_hint_window_seconds = 3 * 3600;  // Cassandra's max_hint_window
  int max_hints_mb = 128;
  int load_report_seconds = 10;            // how often the node reports its load to etcd
  bool placement_balancer = true;          // move tablet replicas between nodes (ScyllaDB's is on by default too)
  int placement_balancer_interval_ms = 5000;
  uint64_t placement_balancer_min_bytes = 64 << 20;  // a node less above the mean in bytes is left alone
  int placement_balancer_max_moves_per_node = 2;     // moves a node takes part in at once
  uint64_t stream_mib_per_second = 64;               // what the migrations a node drives stream, at most; 0: no limit
  std::vector<std::string> failpoints;     // NAME=ACTION (common/failpoints.h)
};

// Returns the process exit code (0 on clean shutdown).
int RunServer(const ServerConfig& config);

}  // namespace tessera
