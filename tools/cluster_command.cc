#include "tools/cluster_command.h"

#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "tools/child_process.h"
#include "tools/local_cluster.h"

namespace tessera {
namespace {

using json = nlohmann::json;

using local_cluster::NodeEntry;
using local_cluster::ReadManifest;
using local_cluster::Running;
using local_cluster::StartNode;
using local_cluster::StopAll;
using local_cluster::WaitForNode;
using local_cluster::WriteManifest;

struct ClusterFlags : local_cluster::Options {
  int node = 0;  // kill, start-node
};

int Fail(const Status& s, int code = 1) {
  std::cerr << "tessera cluster: " << s.message() << "\n";
  return code;
}

int Start(const ClusterFlags& f) {
  json manifest;
  if (Status s = local_cluster::Start(f, &manifest); !s.ok()) return Fail(s, s.IsInvalidArgument() ? 2 : 1);
  std::cout << "cluster of " << manifest["nodes"].size() << " nodes up; etcd at "
            << manifest["etcd"]["endpoint"].get<std::string>() << "\n";
  for (const auto& n : manifest["nodes"]) {
    std::cout << "  node " << n["node"] << ": CQL " << n["address"].get<std::string>() << ":" << n["cql_port"]
              << ", pid " << n["pid"] << ", log " << n["log"].get<std::string>() << "\n";
  }
  return 0;
}

int Stop(const ClusterFlags& f) {
  auto manifest = ReadManifest(f.dir);
  if (!manifest.ok()) return Fail(manifest.status(), 2);
  StopAll(*manifest);
  std::cout << "cluster in " << f.dir << " stopped\n";
  return 0;
}

// Node f.node of the manifest, which must be running (or not) as `running` says.
Result<json*> NodeToActOn(const ClusterFlags& f, json* manifest, bool running) {
  TESSERA_ASSIGN_OR_RETURN(*manifest, ReadManifest(f.dir));
  json* n = NodeEntry(*manifest, f.node);
  if (n == nullptr) return Status::InvalidArgument("no node " + std::to_string(f.node));
  if (Running(*n, "tessera") != running) {
    return Status::InvalidArgument("node " + std::to_string(f.node) + (running ? " is not running" : " is running"));
  }
  return n;
}

int Kill(const ClusterFlags& f) {
  json manifest;
  auto node = NodeToActOn(f, &manifest, /*running=*/true);
  if (!node.ok()) return Fail(node.status(), 2);
  json* n = *node;
  if (!SignalAndWait(n->value("pid", 0), SIGKILL, 5'000)) return Fail(Status::IOError("node survived SIGKILL"));
  std::cout << "node " << f.node << " (pid " << (*n)["pid"] << ") killed\n";
  return 0;
}

int StartOneNode(const ClusterFlags& f) {
  json manifest;
  auto node = NodeToActOn(f, &manifest, /*running=*/false);
  if (!node.ok()) return Fail(node.status(), 2);
  json* n = *node;
  Status s = StartNode(*n);
  if (s.ok()) s = WriteManifest(f.dir, manifest);
  if (s.ok()) s = WaitForNode(*n);
  if (!s.ok()) return Fail(s);
  std::cout << "node " << f.node << " started, pid " << (*n)["pid"] << "\n";
  return 0;
}

}  // namespace

void AddClusterCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ClusterFlags>();
  auto* cmd = app.add_subcommand("cluster", "a local cluster of etcd and nodes on 127.0.0.N, for development and tests");
  cmd->require_subcommand(1);
  auto* start = cmd->add_subcommand("start", "start etcd and N nodes in the background (or restart a stopped DIR)");
  start->add_option("--nodes", flags->nodes, "number of nodes")->capture_default_str();
  start->add_option("--port", flags->port, "CQL port of every node")->capture_default_str();
  start->add_option("--admin-port", flags->admin_port, "admin HTTP port of every node")->capture_default_str();
  start->add_option("--internode-port", flags->internode_port, "internode (gRPC) port of every node")
      ->capture_default_str();
  start->add_option("--etcd-port", flags->etcd_port, "etcd client port")->capture_default_str();
  start->add_option("--etcd-peer-port", flags->etcd_peer_port, "etcd peer port (default: the client port + 1)");
  start->add_option("--etcd-binary", flags->etcd_binary)->capture_default_str();
  start->add_option("--authenticator", flags->authenticator,
                    "every node's authenticator: AllowAllAuthenticator or PasswordAuthenticator (cluster.json then "
                    "holds the default superuser's credentials)");
  start->add_option("--authorizer", flags->authorizer, "every node's authorizer: AllowAllAuthorizer or CassandraAuthorizer");
  start->add_flag("--tls", flags->tls,
                  "TLS between nodes and to etcd, with client certificates both ways (a CA and certificates made "
                  "in DIR/tls)");
  start->add_option("--server-arg", flags->server_args, "an argument passed to every `tessera server` (repeatable)")
      ->allow_extra_args(false);
  auto* stop = cmd->add_subcommand("stop", "stop every node, then etcd");
  auto* kill = cmd->add_subcommand("kill", "SIGKILL one node");
  auto* start_node = cmd->add_subcommand("start-node", "restart one node on its data");
  for (auto* sub : {start, stop, kill, start_node}) sub->add_option("--dir", flags->dir, "cluster directory")->required();
  for (auto* sub : {kill, start_node}) sub->add_option("--node", flags->node, "node number (1..N)")->required();
  start->callback([flags, exit_code] { *exit_code = Start(*flags); });
  stop->callback([flags, exit_code] { *exit_code = Stop(*flags); });
  kill->callback([flags, exit_code] { *exit_code = Kill(*flags); });
  start_node->callback([flags, exit_code] { *exit_code = StartOneNode(*flags); });
}

}  // namespace tessera
