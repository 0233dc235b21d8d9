#include "tools/local_cluster.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <iostream>
#include <thread>

#include <httplib.h>

#include "auth/auth_service.h"
#include "client/cql_connection.h"
#include "cluster/etcd_client.h"
#include "cluster/node_record.h"
#include "tools/child_process.h"
#include "tools/local_certificates.h"

namespace tessera::local_cluster {

namespace fs = std::filesystem;
using auth::kPasswordAuthenticatorClass;
using json = nlohmann::json;

namespace {

std::string SelfPath() {
  std::error_code ec;
  auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("tessera") : path.string();
}

std::string ManifestPath(const std::string& dir) { return dir + "/cluster.json"; }

// The launcher's own way to etcd (with its client certificate under --tls).
cluster::EtcdEndpoint LauncherEtcd(const json& etcd) {
  cluster::EtcdEndpoint e(etcd["endpoint"].get<std::string>());
  if (etcd.contains("tls")) {
    e.ca_file = etcd["tls"]["ca"];
    e.certificate_file = etcd["tls"]["client_cert"];
    e.private_key_file = etcd["tls"]["client_key"];
  }
  return e;
}

Status StartEtcd(json& etcd) {
  const int peer_port = etcd["peer_port"];
  const std::string client_url = etcd["endpoint"];
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port);
  std::vector<std::string> argv = {etcd["binary"], "--name", "tessera-etcd", "--data-dir", etcd["data_dir"],
                                   "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                                   "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                                   "--initial-cluster", "tessera-etcd=" + peer_url};
  if (etcd.contains("tls")) {
    argv.insert(argv.end(), {"--cert-file", etcd["tls"]["cert"], "--key-file", etcd["tls"]["key"],
                             "--trusted-ca-file", etcd["tls"]["ca"], "--client-cert-auth"});
  }
  TESSERA_ASSIGN_OR_RETURN(pid_t pid, SpawnDetached(argv, etcd["log"]));
  etcd["pid"] = pid;
  cluster::EtcdClient client(LauncherEtcd(etcd), 1000);
  for (int i = 0; i < 150; ++i) {
    if (client.Range("/tessera/").ok()) return Status::OK();
    if (!ProcessAlive(pid)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::IOError("etcd did not come up on " + client_url + "; the end of its log:\n" +
                         TailOfFile(etcd["log"], 15));
}

// Waits until `expected` nodes hold a liveness key in etcd.
Status WaitForAlive(const json& manifest, size_t expected) {
  cluster::EtcdClient client(LauncherEtcd(manifest["etcd"]), 1000);
  for (int i = 0; i < 300; ++i) {
    auto alive = client.Range(cluster::kAlivePrefix, cluster::EtcdPrefixEnd(cluster::kAlivePrefix));
    if (alive.ok() && alive->kvs.size() >= expected) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::IOError("fewer than " + std::to_string(expected) + " nodes became alive in etcd within 30 s");
}

// Waits until every node lists every other one in system.peers (each learns
// of later joiners through its etcd watch), so that a driver connecting
// anywhere right after start discovers the whole cluster.
Status WaitForPeers(const json& manifest) {
  const size_t others = manifest["nodes"].size() - 1;
  for (const auto& n : manifest["nodes"]) {
    client::ClientOptions options;
    options.host = n["address"];
    options.port = static_cast<uint16_t>(n.value("cql_port", 9042));
    if (manifest.contains("credentials")) {
      options.username = manifest["credentials"].value("username", "");
      options.password = manifest["credentials"].value("password", "");
    }
    size_t seen = 0;
    for (int i = 0; i < 300 && seen < others; ++i) {
      auto conn = client::CqlConnection::Connect(options);
      if (!conn.ok() && conn.status().IsAuthenticationFailed()) {
        // The superuser's password was changed since: the node serves, and
        // its peers are not for the launcher to check.
        std::cerr << "tessera cluster: node " << n.value("node", 0)
                  << " refused cluster.json's credentials; its peers were not checked\n";
        seen = others;
        break;
      }
      auto peers = conn.ok() ? (*conn)->Query("SELECT peer FROM system.peers") : conn.status();
      if (peers.ok()) seen = peers->rows.rows.size();
      if (seen < others) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (seen < others) {
      return Status::IOError("node " + std::to_string(n.value("node", 0)) + " lists " + std::to_string(seen) + " of " +
                             std::to_string(others) + " peers after 30 s");
    }
  }
  return Status::OK();
}

// Waits until every node sees every node up in its own /cluster/status:
// under the failure detector a node that joined after another is down to
// it until its first ping is answered, and a request at ALL sent in that
// window would be refused as Unavailable. A node whose admin port refuses
// the launcher (credentials changed, HTTPS) is not checked, as in
// WaitForPeers.
Status WaitForUp(const json& manifest) {
  const size_t members = manifest["nodes"].size();
  for (const auto& n : manifest["nodes"]) {
    httplib::Client http(n["address"].get<std::string>(), n.value("admin_port", 9180));
    http.set_connection_timeout(2, 0);
    http.set_read_timeout(5, 0);
    if (manifest.contains("credentials")) {
      http.set_basic_auth(manifest["credentials"].value("username", ""), manifest["credentials"].value("password", ""));
    }
    size_t up = 0;
    std::string last;
    for (int i = 0; i < 300 && up < members; ++i) {
      auto res = http.Get("/cluster/status");
      if (res && (res->status == 401 || res->status == 403)) {
        std::cerr << "tessera cluster: node " << n.value("node", 0)
                  << " refused the launcher its status; who it sees up was not checked\n";
        up = members;
        break;
      }
      up = 0;
      if (res && res->status == 200) {
        auto status = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
        if (!status.is_discarded() && status.contains("nodes")) {
          for (const auto& m : status["nodes"]) up += m.value("state", "") == "up" ? 1 : 0;
        }
        last = res->body;
      } else {
        last = res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error());
      }
      if (up < members) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (up < members) {
      return Status::IOError("node " + std::to_string(n.value("node", 0)) + " sees " + std::to_string(up) + " of " +
                             std::to_string(members) + " nodes up after 30 s: " + last);
    }
  }
  return Status::OK();
}

json NewManifest(const Options& f) {
  const std::string dir = fs::absolute(f.dir).string();
  const std::string tls_dir = dir + "/tls";
  json etcd = {{"endpoint", (f.tls ? "https" : "http") + std::string("://127.0.0.1:") + std::to_string(f.etcd_port)},
               {"client_port", f.etcd_port}, {"peer_port", f.etcd_peer_port > 0 ? f.etcd_peer_port : f.etcd_port + 1},
               {"pid", 0},
               {"binary", f.etcd_binary}, {"data_dir", dir + "/etcd"}, {"log", dir + "/etcd.log"}};
  json nodes = json::array();
  for (int i = 1; i <= f.nodes; ++i) {
    const std::string address = "127.0.0." + std::to_string(i);
    const std::string data = dir + "/node" + std::to_string(i);
    std::vector<std::string> args = {SelfPath(), "server", "--data-dir", data,
                                     "--listen", address + ":" + std::to_string(f.port),
                                     "--admin-listen", address + ":" + std::to_string(f.admin_port),
                                     "--etcd", etcd["endpoint"], "--node-address", address,
                                     "--internode-port", std::to_string(f.internode_port)};
    if (!f.authenticator.empty()) args.insert(args.end(), {"--authenticator", f.authenticator});
    if (!f.authorizer.empty()) args.insert(args.end(), {"--authorizer", f.authorizer});
    if (f.tls) {
      const std::string node = tls_dir + "/node" + std::to_string(i);
      args.insert(args.end(), {"--etcd-ca", tls_dir + "/ca.pem", "--etcd-cert", node + ".pem", "--etcd-key",
                               node + "-key.pem", "--internode-encryption", "all", "--internode-certificate",
                               node + ".pem", "--internode-private-key", node + "-key.pem", "--internode-truststore",
                               tls_dir + "/ca.pem", "--internode-require-client-auth"});
    }
    args.insert(args.end(), f.server_args.begin(), f.server_args.end());
    nodes.push_back({{"node", i}, {"address", address}, {"cql_port", f.port}, {"admin_port", f.admin_port},
                     {"internode_port", f.internode_port}, {"pid", 0}, {"data_dir", data}, {"log", dir + "/node" + std::to_string(i) + ".log"},
                     {"args", args}});
  }
  if (f.tls) {
    etcd["tls"] = {{"ca", tls_dir + "/ca.pem"}, {"cert", tls_dir + "/etcd.pem"}, {"key", tls_dir + "/etcd-key.pem"},
                   {"client_cert", tls_dir + "/launcher.pem"}, {"client_key", tls_dir + "/launcher-key.pem"}};
  }
  json manifest = {{"etcd", etcd}, {"nodes", nodes}};
  if (f.tls) manifest["tls"] = {{"dir", tls_dir}, {"ca", tls_dir + "/ca.pem"}};
  if (f.authenticator == "PasswordAuthenticator" || f.authenticator == kPasswordAuthenticatorClass) {
    manifest["credentials"] = {{"username", "cassandra"}, {"password", "cassandra"}};
  }
  return manifest;
}

}  // namespace

Result<json> ReadManifest(const std::string& dir) {
  std::ifstream in(ManifestPath(dir));
  if (!in) return Status::NotFound("no cluster in " + dir + " (" + ManifestPath(dir) + " is missing)");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("nodes") || !j.contains("etcd")) {
    return Status::Corruption(ManifestPath(dir) + " is not a cluster manifest");
  }
  return j;
}

Status WriteManifest(const std::string& dir, const json& manifest) {
  const std::string tmp = ManifestPath(dir) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << manifest.dump(2) << "\n";
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, ManifestPath(dir), ec);
  return ec ? Status::IOError("cannot write " + ManifestPath(dir)) : Status::OK();
}

bool Running(const json& process, const char* name) {
  const pid_t pid = process.value("pid", 0);
  return ProcessAlive(pid) && ProcessIs(pid, name);
}

json* NodeEntry(json& manifest, int node) {
  for (auto& n : manifest["nodes"]) {
    if (n.value("node", 0) == node) return &n;
  }
  return nullptr;
}

Status StartNode(json& node) {
  std::vector<std::string> argv = node["args"];
  TESSERA_ASSIGN_OR_RETURN(pid_t pid, SpawnDetached(argv, node["log"]));
  node["pid"] = pid;
  return Status::OK();
}

Status WaitForNode(const json& node) {
  if (WaitForPort(node["address"], node["cql_port"], 60'000, node["pid"])) return Status::OK();
  return Status::IOError("node " + std::to_string(node.value("node", 0)) + " did not start serving CQL on " +
                         node["address"].get<std::string>() + ":" + std::to_string(node.value("cql_port", 0)) +
                         "; the end of its log:\n" + TailOfFile(node["log"], 15));
}

void StopAll(json& manifest) {
  for (auto& n : manifest["nodes"]) {
    if (Running(n, "tessera")) ::kill(n.value("pid", 0), SIGTERM);
  }
  for (auto& n : manifest["nodes"]) {
    const pid_t pid = n.value("pid", 0);
    if (Running(n, "tessera") && !SignalAndWait(pid, SIGTERM, 20'000)) SignalAndWait(pid, SIGKILL, 5'000);
  }
  auto& etcd = manifest["etcd"];
  if (Running(etcd, "etcd") && !SignalAndWait(etcd.value("pid", 0), SIGTERM, 20'000)) {
    SignalAndWait(etcd.value("pid", 0), SIGKILL, 5'000);
  }
}

Status Start(const Options& f, json* manifest) {
  if (f.nodes < 1 || f.nodes > 254) return Status::InvalidArgument("--nodes takes 1 to 254");
  std::error_code ec;
  fs::create_directories(f.dir, ec);
  if (ec) return Status::InvalidArgument("cannot create " + f.dir);
  if (auto existing = ReadManifest(f.dir); existing.ok()) {
    *manifest = *existing;
    if (Running((*manifest)["etcd"], "etcd")) return Status::InvalidArgument("the cluster in " + f.dir + " is running");
  } else {
    *manifest = NewManifest(f);
    if (f.tls) {
      std::map<std::string, std::string> names = {{"etcd", "127.0.0.1"}, {"launcher", "127.0.0.1"}};
      for (const auto& n : (*manifest)["nodes"]) names["node" + std::to_string(n.value("node", 0))] = n["address"];
      TESSERA_RETURN_IF_ERROR(MakeCertificates((*manifest)["tls"]["dir"], names));
    }
  }
  TESSERA_RETURN_IF_ERROR(StartEtcd((*manifest)["etcd"]));
  Status s;
  for (auto& n : (*manifest)["nodes"]) {
    if (s.ok()) s = StartNode(n);
  }
  if (s.ok()) s = WriteManifest(f.dir, *manifest);
  for (auto& n : (*manifest)["nodes"]) {
    if (s.ok()) s = WaitForNode(n);
  }
  if (s.ok()) s = WaitForAlive(*manifest, (*manifest)["nodes"].size());
  if (s.ok()) s = WaitForPeers(*manifest);
  if (s.ok()) s = WaitForUp(*manifest);
  if (!s.ok()) StopAll(*manifest);
  return s;
}

}  // namespace tessera::local_cluster
