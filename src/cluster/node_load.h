// NodeLoad: what a node reports about its own share of the cluster's data,
// for `tessera admin status` (nodetool status's Load column) and for a
// balancer that places tablets by bytes (issue 11).
//
// etcd key (FROZEN: nodes of different releases read it):
//   /tessera/load/<host_id text> = {"bytes": n, "tablets": n, "at_micros": n}
//     bytes     approximate bytes this node stores (RocksDB approximate
//               sizes, memtables included) for the tablets it holds a
//               replica of, plus its node-local (system) tables
//     tablets   replicas of replicated tablets this node holds
//     at_micros when it was measured (wall clock, microseconds since epoch)
// The key is not bound to the node's lease: a node that is down keeps
// showing its last load, as nodetool status does. It goes with the node
// record when a node is removed (issue 11).
//
// NodeLoadReporter measures and puts the key every `interval` on a thread
// of its own, starting at once; Stop is explicit (the destructor calls it).
//
// Thread safety: MeasureNodeLoad reads the database's tablet snapshot and
// is callable from any thread. NodeLoadReporter: Start/Stop from one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"

namespace tessera {
class Database;
}

namespace tessera::cluster {

class EtcdClient;

inline constexpr char kLoadPrefix[] = "/tessera/load/";

struct NodeLoad {
  uint64_t bytes = 0;
  uint64_t tablets = 0;
  int64_t at_micros = 0;
};

std::string EncodeNodeLoad(const NodeLoad& load);
// Corruption for text that is not a load report.
Result<NodeLoad> DecodeNodeLoad(const std::string& text);

// This node's load now. self_host_id: 16 bytes.
NodeLoad MeasureNodeLoad(Database& db, const std::string& self_host_id);

class NodeLoadReporter {
 public:
  // REQUIRES: etcd and db outlive the reporter (Stop before they go).
  NodeLoadReporter(EtcdClient* etcd, Database* db, std::string self_host_id, std::chrono::milliseconds interval);
  ~NodeLoadReporter();  // Stop()
  void Start();
  // Wakes and joins the thread; a report in flight finishes first (bounded
  // by the etcd client's time-out).
  void Stop();

 private:
  void Run();

  EtcdClient* const etcd_;
  Database* const db_;
  const std::string self_host_id_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tessera::cluster
