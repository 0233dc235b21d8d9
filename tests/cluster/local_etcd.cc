#include "tests/cluster/local_etcd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "cluster/etcd_client.h"

namespace tessera::testing {

std::pair<int, int> FreeLoopbackPorts() {
  int fds[2], ports[2];
  for (int i = 0; i < 2; ++i) {
    fds[i] = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fds[i], reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    ::getsockname(fds[i], reinterpret_cast<sockaddr*>(&addr), &len);
    ports[i] = ntohs(addr.sin_port);
  }
  ::close(fds[0]);
  ::close(fds[1]);
  return {ports[0], ports[1]};
}

bool LocalEtcd::Start(const std::filesystem::path& dir) {
  dir_ = dir;
  std::filesystem::create_directories(dir_);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (StartOnce()) return true;
    Stop();
    std::filesystem::create_directories(dir_);
  }
  return false;
}

bool LocalEtcd::StartOnce() {
  const auto [client_port, peer_port] = FreeLoopbackPorts();
  const std::string client = "http://127.0.0.1:" + std::to_string(client_port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
  endpoint_ = client;
  pid_ = ::fork();
  if (pid_ == 0) {
    const std::string log = (dir_ / "etcd.log").string();
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    const std::string data = (dir_ / "etcd").string();
    const std::string cluster = "t=" + peer;
    ::execl("/usr/bin/etcd", "etcd", "--name", "t", "--data-dir", data.c_str(), "--listen-client-urls", client.c_str(),
            "--advertise-client-urls", client.c_str(), "--listen-peer-urls", peer.c_str(),
            "--initial-advertise-peer-urls", peer.c_str(), "--initial-cluster", cluster.c_str(), nullptr);
    ::_exit(127);
  }
  cluster::EtcdClient probe(endpoint_, 500);
  for (int i = 0; i < 100; ++i) {
    if (probe.Range("x").ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

void LocalEtcd::Stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

}  // namespace tessera::testing
