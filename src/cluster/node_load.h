// NodeLoad: what a node reports about its own share of the cluster's data,
// for `tessera admin status` (nodetool status's Load column) and for a
// balancer that places tablets by bytes (issue 11).
//
// etcd key (FROZEN: nodes of different releases read it):
//   /tessera/load/<host_id text> = {"bytes": n, "tablets": n, "at_micros": n,
//       "replica_reads_per_second": x, "replica_writes_per_second": x,
//       "tablet_loads": [{"table": uuid text, "start": hex, "reads": x, "writes": x,
//                         "bytes": n, "sample": [[hex, x], ...], "tail": [n, n, n]},
//                        ...]}
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
//     sample    the partitions this node coordinated requests for in the
//               tablet (tablets/key_sample.h), so that the balancer leader
//               cuts a load split where the cluster's requests fall, not
//               only its own (it coordinates few or none of them when
//               drivers route to replicas): table-relative partition
//               positions in hex, ascending, each with the rows accessed
//               from it up to the next (CoarsenSample); for the
//               kMaxSampledTablets tablets this node coordinated the most
//               rows of, listed with reads and writes of 0 when it is no
//               replica of them
//     tail      with a sample: the writes it saw, those that advanced the
//               tablet's greatest key and those near it (KeySample::Snapshot
//               writes, advances, near_tail), so that the leader declines
//               to split an append-only tail by load as a node's own
//               balancer does
//   The last three, and a tablet's "bytes", "sample" and "tail", are
//   optional (absent in reports of older nodes: 0, none).
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
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tablets/balancer_policy.h"
#include "tablets/key_sample.h"

namespace tessera {
class Database;
}

namespace tessera::cluster {

class EtcdClient;

inline constexpr char kLoadPrefix[] = "/tessera/load/";

inline constexpr size_t kMaxReportedTablets = 256;
// Tablets reported with their key sample, and the most keys each sample keeps.
inline constexpr size_t kMaxSampledTablets = 8;
inline constexpr size_t kMaxReportedSampleKeys = 64;
// The fewest sampled keys a load split cuts by (else at the median
// partition); a node does not report a sample of fewer.
inline constexpr size_t kMinSampledKeys = 8;

// Requests per second one node served for one tablet as its replica.
struct TabletLoadReport {
  std::string table_uuid;  // text form
  std::string start;       // table-relative start key (bytes)
  double reads = 0, writes = 0;
  uint64_t bytes = 0;  // what this node stores of the tablet
  // Table-relative partition positions, ascending, with their rows (see "sample" above).
  std::vector<std::pair<std::string, double>> sample;
  uint64_t sampled_writes = 0, advances = 0, near_tail = 0;  // "tail" above
};

// `keys` (ascending, weighted) in at most `max_keys` entries (>= 1): runs of
// neighbouring keys of about equal weight, each kept as its first key
// carrying the whole run's weight, so that a cut before any kept key divides
// the weight exactly as it divided `keys`. Keys of weight 0 or less are
// dropped; fewer than `max_keys` keys come back unchanged.
std::vector<std::pair<std::string, double>> CoarsenSample(const std::vector<std::pair<std::string, double>>& keys,
                                                          size_t max_keys);

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

// The sample of a tablet's keys from the whole cluster, for the balancer
// leader's load split: `own` (this node's TabletLoad of it, absolute keys,
// its live sample) joined by what every other node last reported of the
// requests it coordinated in the table (`reports` by host id text, the one of
// `self_host_text` left out; keys outside `own`'s bounds too, as a node whose
// map is behind reports a wider tablet), in absolute keys, ascending, equal
// keys summed; the write, advance and near-tail counts summed likewise, over
// the reported tablets that had a key inside. `*nodes`: how many nodes'
// samples it holds.
KeySample::Snapshot ClusterKeySample(uint32_t table_id, const std::string& table_uuid_text, const TabletLoad& own,
                                     const std::string& self_host_text, const std::map<std::string, NodeLoad>& reports,
                                     size_t* nodes);

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
