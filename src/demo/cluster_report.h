// The demo's report on a local cluster (`tessera demo --nodes N`): for each
// key design, which nodes served its writes and reads and which hold its
// tablets, over time and in total, next to the seeds' queries and the
// cluster's tablet events — as text for the terminal, JSON for tests and a
// self-contained HTML page.
//
// "Served" counts requests a node served as a replica (its
// tessera_table_replica_{reads,writes}_total counters), wherever they were
// coordinated: with replication factor 1 each write is served by exactly the
// node that holds its tablet, so the counts show where the load went.
//
// Thread safety: pure functions over a finished report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "demo/report.h"

namespace tessera::demo {

struct NodeServed {
  int node = 0;              // 1..N: 127.0.0.N
  std::string address;
  uint64_t writes = 0;       // write requests served while the table loaded
  uint64_t reads = 0;        // read requests served during the table's read phase
  size_t tablets = 0;        // tablets of the table it holds a replica of, at the end
};

// Writes each node served between the previous sample and `seconds` (since
// the load began); one entry per node, in node order.
struct ServedSample {
  double seconds = 0;
  std::vector<uint64_t> writes;
};

struct ClusterTableReport {
  std::string name, design, create_cql;
  uint64_t loaded = 0, rejected = 0, counted = 0;
  double load_seconds = 0;
  std::string read_query;    // the shape of the read phase's queries
  uint64_t read_queries = 0; // issued in the read phase
  size_t tablets = 0;        // at the end
  std::vector<NodeServed> nodes;
  std::vector<ServedSample> timeline;
  // Over the load's samples, weighted by their writes: the share of the
  // writes that the busiest node of each sample served (1.0: one node at a
  // time took everything; 1/N: spread evenly).
  double busiest_node_write_share = 0;
  // The share of the load's samples with writes in which one node served at
  // least 90% of them (a move's write-both stage splits a sample in two).
  double one_node_sample_share = 0;
  // Nodes that served at least 10% of the table's writes in all.
  int nodes_serving_writes = 0;
};

struct ClusterDemoReport {
  int nodes = 0;
  int replication_factor = 1;
  std::string etcd;          // endpoint
  std::string balancer;      // the thresholds the nodes ran with
  std::vector<ClusterTableReport> tables;
  std::vector<QueryReport> queries;
  // The cluster's splits, merges, moves, holds and refusals; subject: the
  // node that decided ("node N").
  std::vector<DetectionRow> tablet_events;
};

// Fills busiest_node_write_share, one_node_sample_share and
// nodes_serving_writes from the timeline
// and the totals of `t`.
void SummarizeServed(ClusterTableReport* t);

std::string RenderClusterText(const ClusterDemoReport& r);
std::string RenderClusterJson(const ClusterDemoReport& r);
std::string RenderClusterHtml(const ClusterDemoReport& r);

}  // namespace tessera::demo
