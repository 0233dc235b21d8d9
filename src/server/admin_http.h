// AdminHttpServer: the operator's HTTP port (cpp-httplib), loopback by
// default.
//
//   GET  /metrics         Prometheus text format 0.0.4 (metrics_text.h)
//   GET  /health          "ok"
//   GET  /settings        {"name": "value", ...}: the settings in effect, as
//                         system_views.settings (server/node_settings.h)
//   POST /tablets/split?keyspace=K&table=T&tablet=ID   split at the middle
//   POST /tablets/merge?keyspace=K&table=T&tablet=ID   merge with the right neighbour
//   POST /compact         flush and compact everything (nodetool compact); 200 when done
//   POST /repair[?keyspace=K[&table=T]]   repair (cluster/repair.h) on a
//                         cluster node: 200 with its JSON report when every
//                         tablet was compared, 500 with it when one failed,
//                         404 on a single node, 400/404 for a bad name
//   GET  /cluster/status  a cluster node: every member, up or down, its
//                         load and tablet replicas (cluster/cluster_status.h);
//                         404 on a single node
//   GET  /cluster/tablets[?keyspace=K[&table=T]]  every placed tablet and
//                         its replicas; 404 on a single node or for an
//                         unknown keyspace or table
//   POST /tablets/move?keyspace=K&table=T&start=HEX&from=NODE&to=NODE
//                         moves one replica of the tablet starting at HEX
//                         (cluster/tablet_migration.h; NODE: address or
//                         host id); 200 with the JSON report when it
//                         completed, 500 with it when it reverted or
//                         stopped, 400/404 when refused before it began
//   POST /nodes/decommission?node=NODE   moves every tablet replica NODE
//                         holds to other nodes, then removes it from the
//                         cluster (cluster/node_lifecycle.h); 200 with the
//                         JSON report when it left, 500 with it when a move
//                         failed, 400/404 when refused before any move
//   POST /nodes/remove?node=NODE         the same for a node that is down
//                         (nodetool removenode)
//   POST /failpoints?name=NAME&action=pause|error|off   sets a failpoint
//                         (common/failpoints.h), on any node
//   GET  /failpoints      {"paused": [names an operation is held at]}
//   POST /tracing/probability?value=P   the share of requests traced
//                         without the tracing flag (nodetool
//                         settraceprobability; tracing/trace_store.h),
//                         0..1; 400 for another value
//   GET  /tracing/probability   {"probability": P}
//   GET  /keyvisualizer   the Key Visualizer page (keyviz/keyviz_page.h)
//   GET  /keyvisualizer/data.json[?table=KS.T][&columns=N]   its data
//                         (keyviz/keyviz_json.h); N: the newest N columns
// Split and merge answer 200 with a JSON object naming the new tablets,
// 400 on a missing or bad parameter or a refused split (one partition),
// 404 for an unknown table or tablet. The Key Visualizer routes answer 404
// when the server has no sampler, 400 for a bad `columns`. They go through Database::SplitTablet
// and MergeTablets, so they are online like the balancer's own.
//
// Security (AdminSecurity): with authentication on, every route but
// /metrics (unless metrics_require_auth) needs HTTP Basic credentials of a
// superuser role: 401 without or with wrong ones, 403 for another role.
// With a certificate the port speaks HTTPS only, so Basic credentials never
// cross the wire in clear.
//
// Threads: cpp-httplib's thread pool, started by Start, joined by Stop.
// Thread safety: Start/Stop from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera {
class Coordinator;
class Database;
namespace auth {
class AuthService;
}
namespace tracing {
class TraceStore;
}
namespace keyviz {
class KeyVizSampler;
}
}

namespace tessera::server {

struct AdminSecurity {
  auth::AuthService* auth = nullptr;  // null or no authentication: the port is open
  bool metrics_require_auth = false;  // false: /metrics stays open for scrapers
  std::string certificate_file;       // PEM; set: HTTPS
  std::string private_key_file;
};

// What a cluster node adds to the port, set once it has joined (and reset
// before it leaves). `repair` returns the JSON report (and ok) or an error;
// `metrics` returns Prometheus text appended to /metrics; `status` and
// `tablets` return the JSON of /cluster/status and /cluster/tablets.
struct AdminClusterHooks {
  std::function<Result<std::pair<bool, std::string>>(const std::string& keyspace, const std::string& table)> repair;
  std::function<std::string()> metrics;
  std::function<Result<std::string>()> status;
  std::function<Result<std::string>(const std::string& keyspace, const std::string& table)> tablets;
  std::function<Result<std::pair<bool, std::string>>(const std::string& keyspace, const std::string& table,
                                                     const std::string& start_hex, const std::string& from,
                                                     const std::string& to)>
      move;
  std::function<Result<std::pair<bool, std::string>>(const std::string& node)> decommission;
  std::function<Result<std::pair<bool, std::string>>(const std::string& node)> removenode;
  std::function<Status(const std::string& name, const std::string& action)> failpoint;
  std::function<std::vector<std::string>()> paused_failpoints;
};

class AdminHttpServer {
 public:
  // Reads and changes the node's store through `coordinator` (its database;
  // a manual split's median through the replicas when this node stores no copy).
  // REQUIRES: coordinator, keyviz (may be null: no Key Visualizer) and security.auth outlive the server.
  explicit AdminHttpServer(Coordinator* coordinator, keyviz::KeyVizSampler* keyviz = nullptr,
                           AdminSecurity security = {});
  ~AdminHttpServer();  // Stop()

  // Binds address:port (port 0: any free port) and serves in the background.
  // Errors: IOError when the address cannot be bound; InvalidArgument when
  // the certificate or key cannot be loaded.
  Status Start(const std::string& address, uint16_t port);
  void Stop();
  uint16_t port() const { return port_; }
  // Thread-safe; routes called after it see the new hooks.
  void SetClusterHooks(AdminClusterHooks hooks);
  // What GET /settings shows: (name, value) pairs, in order. Thread-safe.
  void SetSettings(std::vector<std::pair<std::string, std::string>> settings);
  // Prometheus text of the CQL server appended to /metrics (null: none).
  // REQUIRES: what `render` reads outlives the server or a later call. Thread-safe.
  void SetFrontDoorMetrics(std::function<std::string()> render);
  // The node's traced requests, for /tracing/probability (null: 404).
  // REQUIRES: `traces` outlives the server or a later call. Thread-safe.
  void SetTraceStore(tracing::TraceStore* traces);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  AdminSecurity security_;
  uint16_t port_ = 0;
};

}  // namespace tessera::server
