// NodeLoad: what a node reports about its own share of the cluster's data,
// for `tessera admin status` (nodetool status's Load column) and for a
// balancer that places tablets by bytes (issue 11).
//
// etcd key (FROZEN: nodes of different releases read it):
//   /tessera/load/<host_id text> = {"bytes": n, "tablets": n, "at_micros": n,
//       "replica_reads_per_second": x, "replica_writes_per_second": x,
//       "tablet_loads": [{"table": uuid text, "start": hex, "reads": x, "writes": x,
//                         "bytes": n}, ...]}
//     bytes     approximate bytes this node stores (RocksDB approximate
//               sizes, memtables included) for the tablets it holds a
//               replica of, plus its node-local (system) tables
//     tablets   replicas of replicated tablets this node holds
//     at_micros when it was measured (wall clock, microseconds since epoch)
//     replica_*_per_second  requests this node served as a replica, per
//               second over the last 10 s (TabletCounters::CountReplicaRequest)
//     tablet_loads  the same per tablet, and the bytes this node stores of
//               it, for at most kMaxReportedTablets tablets with the most
//               requests (none at 0) and as many holding the most bytes:
//               `start` is the tablet's table-relative start key in hex
//               (the placement's), and a tablet this node served but no
//               longer holds is still listed while its window runs down, so
//               that a moved tablet's load is the sum of its old and new
//               holders' reports.
//   The last three, and a tablet's "bytes", are optional (absent in reports
//   of older nodes: 0, none).
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
#include <vector>

#include "common/status.h"

namespace tessera {
class Database;
}

namespace tessera::cluster {

class EtcdClient;

inline constexpr char kLoadPrefix[] = "/tessera/load/";

inline constexpr size_t kMaxReportedTablets = 256;

// Requests per second one node served for one tablet as its replica.
struct TabletLoadReport {
  std::string table_uuid;  // text form
  std::string start;       // table-relative start key (bytes)
  double reads = 0, writes = 0;
  uint64_t bytes = 0;  // what this node stores of the tablet
};

struct NodeLoad {
  uint64_t bytes = 0;
  uint64_t tablets = 0;
  int64_t at_micros = 0;
  double replica_reads_per_second = 0, replica_writes_per_second = 0;
  std::vector<TabletLoadReport> tablet_loads;  // busiest first, then the largest of the rest
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
