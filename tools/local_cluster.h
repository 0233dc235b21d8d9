// A local cluster for development, tests and the demo, in the manner of
// ccm: etcd and N `tessera server` processes on 127.0.0.1..N, each in the
// background (tools/child_process.h), recorded in DIR/cluster.json so that
// another invocation finds them again by pid.
//
// The manifest (frozen fields, read back by later invocations and by the
// tests' launcher): "etcd": {endpoint, client_port, peer_port, pid, binary,
// data_dir, log}; "nodes": [{node, address, cql_port, admin_port,
// internode_port, pid, data_dir, log, args}]; "credentials": {username,
// password} when the nodes run the PasswordAuthenticator: the default
// superuser's, which the launcher's own checks log in with (a client may
// use them until it changes that role's password). Under --tls, "etcd"
// also holds "tls": {ca, cert, key, client_cert, client_key} (its own
// certificate and the launcher's client one) and "tls": {dir, ca} says
// where the cluster's certificates are.
//
// Thread safety: none needed (the launcher is one thread).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::local_cluster {

struct Options {
  int nodes = 3;                 // 1..254: node i listens on 127.0.0.i
  std::string dir;               // holds cluster.json, etcd/, nodeN/ and the logs
  int port = 9042;               // CQL port of every node
  int admin_port = 9180;         // admin HTTP port of every node
  int internode_port = 7000;     // gRPC port of every node
  int etcd_port = 2379;          // etcd client port on 127.0.0.1
  int etcd_peer_port = 0;        // 0: etcd_port + 1
  std::string etcd_binary = "/usr/bin/etcd";
  std::vector<std::string> server_args;  // passed to every `tessera server`
  std::string authenticator;             // empty: the server's default (AllowAllAuthenticator)
  std::string authorizer;                // empty: the server's default (AllowAllAuthorizer)
  // TLS everywhere but the CQL port: a CA of the cluster's own and node
  // certificates in DIR/tls (tools/local_certificates.h); etcd over https
  // with client certificates required; internode TLS with client auth.
  bool tls = false;
};

// DIR/cluster.json. NotFound when missing, Corruption when not a manifest.
Result<nlohmann::json> ReadManifest(const std::string& dir);
// Writes DIR/cluster.json atomically (a temporary file renamed). IOError.
Status WriteManifest(const std::string& dir, const nlohmann::json& manifest);

// Starts etcd and every node of the manifest in DIR, or a new manifest from
// `options` when DIR holds none, and returns once every node serves CQL, is
// alive in etcd and lists every other node in system.peers (bounded: 60 s
// per node, 30 s for agreement). InvalidArgument when DIR's cluster is
// already running or `options` are out of range; IOError naming the process
// and the tail of its log when one does not come up (everything started is
// stopped again). On success *manifest is what DIR/cluster.json now holds.
Status Start(const Options& options, nlohmann::json* manifest);

// SIGTERM to every running node, then etcd; SIGKILL after 20 s each.
void StopAll(nlohmann::json& manifest);

// The entry of node `node` (1-based), or nullptr.
nlohmann::json* NodeEntry(nlohmann::json& manifest, int node);
// True while the entry's recorded pid runs a program named `name`.
bool Running(const nlohmann::json& process, const char* name);
// Starts one node from its recorded arguments; its pid goes into the entry.
Status StartNode(nlohmann::json& node);
// Waits up to 60 s for the node's CQL port (while its process lives).
Status WaitForNode(const nlohmann::json& node);

}  // namespace tessera::local_cluster
