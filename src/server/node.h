// Node: one whole Tessera node in-process — the Database (with its
// balancer), the Coordinator above it (coordinator/coordinator.h), the CQL
// request processor, the CQL listener, the admin HTTP
// port with the Key Visualizer's sampler and, with an etcd endpoint, its
// cluster membership — started and stopped as one. `tessera server` and `tessera demo` run
// one; tests run CQL against one through a real socket (ScyllaDB's
// cql_test_env, over the wire).
//
// Thread safety: Start and Stop from one thread; the accessors from any.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "auth/auth_service.h"
#include "common/failpoints.h"
#include "common/status.h"
#include "coordinator/coordinator.h"
#include "db/database.h"
#include "keyviz/history.h"
#include "cluster/internode_tls.h"
#include "server/connection_limits.h"
#include "server/cql_server.h"
#include "server/tls_options.h"

namespace tessera::tracing {
class TraceStore;
}

namespace tessera::cluster {
class InMemoryNetwork;
}

namespace tessera::server {

// Cluster membership (cluster/membership.h). Without an etcd endpoint the
// node is the embedded single node: no etcd, no peers.
struct NodeClusterOptions {
  std::string etcd_endpoint;        // "http://127.0.0.1:2379"; empty: single node
  // etcd over TLS (an https endpoint): CA of etcd's certificate, and this
  // node's client certificate and key (etcd's --client-cert-auth); PEM files.
  std::string etcd_ca_file, etcd_certificate_file, etcd_private_key_file;
  // Internode encryption (cluster/internode_tls.h, Cassandra's server_encryption_options).
  cluster::InternodeTlsOptions internode_tls;
  std::string node_address;         // the address other nodes and drivers use; empty: the CQL address
  std::string data_center = "datacenter1";
  std::string rack = "rack1";
  int lease_ttl_seconds = 5;        // how long etcd keeps a silent node's liveness key
  // Failure detection between peers (cluster/failure_detector.h): a peer
  // that has not answered this node's pings for this long is DOWN to this
  // node, UP on its first answer; 0: liveness follows the etcd lease instead.
  int64_t failure_detector_timeout_ms = 2000;
  uint16_t internode_port = 7000;   // gRPC internode listener on node_address; 0: any free port
  // Tests: the nodes of one process reach each other over this in-process
  // network (cluster/in_memory_network.h) instead of gRPC, registered under
  // node_address:internode_port (REQUIRES: internode_port > 0, no internode
  // TLS). Null: gRPC.
  cluster::InMemoryNetwork* in_memory_network = nullptr;
  int64_t write_timeout_micros = 2'000'000;  // a coordinator's wait for write acknowledgements
  int64_t read_timeout_micros = 5'000'000;   // a coordinator's wait for read answers
  // Hinted handoff (cluster/hint_store.h): per-replica size bound and age
  // bound (Cassandra's max_hint_window); hints live in <data_dir>/hints.
  uint64_t max_hints_bytes_per_node = 128u << 20;
  int64_t max_hint_window_micros = 3LL * 3600 * 1'000'000;
  // How often the node puts its load in etcd (cluster/node_load.h).
  int64_t load_report_interval_ms = 10'000;
  // How often the node prunes its Paxos state (cluster/paxos_pruner.h).
  int64_t paxos_prune_interval_ms = 600'000;
  // The placement balancer (cluster/placement_balancer.h): when on, the node
  // competes for leadership and the leader moves tablet replicas while nodes
  // hold unequal counts, bytes or load. `tessera server` turns it on unless
  // given --no-placement-balancer; a Node made in-process has it off unless set.
  bool placement_balancer = false;
  int64_t placement_balancer_interval_micros = 5'000'000;
  uint64_t placement_balancer_min_bytes = 64 << 20;  // PlacementPlanOptions::min_bytes
  int placement_balancer_max_moves_per_node = 2;     // PlacementBalancerOptions::max_moves_per_node
  uint64_t stream_bytes_per_second = 64u << 20;      // what this node's migrations stream, at most; 0: no limit
};

struct NodeOptions {
  DatabaseOptions database;                 // data_dir, balancer, guardrails
  std::string cql_address = "127.0.0.1";
  uint16_t cql_port = 9042;                 // 0: any free port
  std::string admin_address = "127.0.0.1";
  int admin_port = 9180;                    // 0: any free port; < 0: no admin port
  // The Key Visualizer's sampler runs with the admin port, which serves it.
  keyviz::KeyVizOptions keyviz;
  // Security: authenticator and authorizer (system_auth is created with
  // them), client TLS (also the admin port's HTTPS when admin_tls), limits.
  auth::AuthOptions auth;
  TlsOptions client_tls;
  bool admin_tls = false;             // the admin port speaks HTTPS with client_tls's certificate
  bool admin_metrics_require_auth = false;
  ConnectionLimits limits;
  // Threads running CQL requests (CqlServerOptions::request_threads; 0: inline).
  int request_threads = DefaultRequestThreads();
  // Threads running the requests that may wait for other nodes
  // (CqlServerOptions::waiting_threads; 0: none, they take request threads).
  int waiting_request_threads = 0;
  // CREATE FUNCTION / AGGREGATE in Lua (Cassandra's enable_user_defined_functions).
  bool enable_user_defined_functions = false;
  NodeClusterOptions cluster;
  // NAME=ACTION failpoints set at start (common/failpoints.h); the admin
  // API's POST /failpoints changes them later. InvalidArgument from Start
  // for a malformed one.
  std::vector<std::string> failpoints;
};

class Node {
 public:
  // Opens the database, sets up system_auth when authentication is on
  // (creating cassandra/cassandra on first start), and starts both
  // listeners. Errors: those of Database::Open, IOError when an address
  // cannot be bound, InvalidArgument for unreadable TLS files or an
  // authorizer without an authenticator; those of Membership::Start with an
  // etcd endpoint (IOError when etcd is unreachable).
  static Result<std::unique_ptr<Node>> Start(const NodeOptions& options);
  ~Node();  // Stop()

  // Leaves the cluster's live set (peers see this node DOWN), stops the
  // listeners (closing connections), then closes the database. Idempotent.
  void Stop();
  uint16_t cql_port() const;
  uint16_t admin_port() const;  // 0 without an admin port
  const std::string& host_id() const { return host_id_; }  // 16 bytes, kept in <data_dir>/HOST_ID
  Database& db() { return *db_; }
  Coordinator& coordinator() { return *coordinator_; }
  // This node's failpoints, what the admin API's POST /failpoints sets (for
  // tests that run nodes in their own process).
  Failpoints& failpoints() { return failpoints_; }
  // Null without an authenticator.
  auth::AuthService* auth() const;

 private:
  Node() = default;
  struct Listeners;
  static Status JoinCluster(const NodeOptions& options, const std::string& host_id, Listeners& l);
  Status StartInternode(const NodeOptions& options, Listeners& l);
  Status AttachReplication(const NodeOptions& options, Listeners& l);
  std::string host_id_;
  Failpoints failpoints_;  // before db_: the database hits them, so they outlive it
  // The traced requests (system_traces); before the listeners, whose query processor begins them.
  std::unique_ptr<tracing::TraceStore> traces_;
  std::unique_ptr<Database> db_;
  // Above db_: the query processor writes through it; its builds stop first.
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Listeners> listeners_;
};

}  // namespace tessera::server
