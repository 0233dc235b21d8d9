// `tessera demo --nodes N` (N >= 2): the demo on a local cluster. Starts etcd
// and N nodes on 127.0.0.1..N (tools/local_cluster.h, in DIR = the demo's
// --data-dir + "/cluster"; a stopped cluster there is restarted on its
// data), with the tablet balancer splitting by size and load and the
// placement balancer moving tablets by count, bytes and served load. Then, in a
// keyspace `demo` of replication factor 1 (so that each request is served by
// the one node holding its tablet), it creates each table, waits for schema
// agreement (every node's system.local schema_version equal, 30 s at most),
// loads the shipped access log through CQL into it and reads it back the
// way an application would, sampling every node's served-request counters
// (tools/served_load.h) twice a second:
//   demo.access_by_time          timestamp first on a range table: the
//                                seeds' hot tail, on one node at a time;
//   demo.access_by_host          the seeds' key-order swap, host first,
//                                hashed: spread over every node;
//   demo.access_by_time_bucketed the seeds' hash prefix (buckets = 6): the
//                                tail spread over every node, reads merged in
//                                time order.
// The report (demo/cluster_report.h) goes to the terminal and to
// REPORT_DIR/report.{html,json}. Then the cluster keeps serving until
// SIGINT or SIGTERM, or is stopped at once with exit_after_report; either
// way every process it started is stopped (SIGTERM, then SIGKILL).
//
// Returns the exit code: 0 done, 1 a step failed (logged), 2 bad options,
// 130 interrupted before the report.
#pragma once

#include <string>

namespace tessera {

struct ClusterDemoOptions {
  int nodes = 3;
  std::string cluster_dir;         // the local cluster's directory
  std::string datasets, report_dir;
  int port = 9042;                 // CQL port of every node
  int admin_port = 9180;           // admin HTTP port of every node (the counters are read there)
  int internode_port = 7000;
  int etcd_port = 2379;
  int etcd_peer_port = 0;          // 0: etcd_port + 1
  double rate = 2500;              // rows per second of each load: the balancers act while it runs
  int read_queries = 200;          // per table, in its read phase
  bool exit_after_report = false;
};

int RunClusterDemo(const ClusterDemoOptions& options);

}  // namespace tessera
