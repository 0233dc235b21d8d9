// What `tessera admin status` and `tessera admin tablets` show (nodetool
// status and ScyllaDB's tablet listing), as JSON built by any one node from
// etcd: the members and their liveness (cluster/membership.h), each
// node's reported load (cluster/node_load.h) and every table's tablet
// placement (cluster/tablet_placement.h). Placements of tables this node's
// catalog no longer has (dropped) are left out.
//
// ClusterStatusJson:
//   {"nodes": [{"host_id", "address", "data_center", "rack",
//               "state": "up" | "down",
//               "load_bytes": n | null, "load_at_micros": n | null,
//               "reads_per_second", "writes_per_second": x | null (requests
//               it served as a replica over the last 10 s, as reported),
//               "tablets": replicas of tablets placed on it,
//               "owns": its share of all tablet replicas, 0..1}],
//    "tablet_replicas": n}
//   nodes ordered by data center, then address.
// ClusterTabletsJson (keyspace and table may be empty: every one):
//   {"tablets": [{"keyspace", "table", "start", "end" (hex, table-relative;
//                 "" end: the table's end), "replicas": [{"host_id",
//                 "address"}], "transition": null | {"stage", "leaving",
//                 "pending" (addresses)}}]}
//   tables ordered by keyspace and name, tablets by start.
//
// Errors: IOError when etcd is unreachable; Corruption for a value that is
// not a placement; NotFound for an unknown keyspace or table (tablets).
//
// Thread safety: reads etcd and the catalog; callable from any thread.
#pragma once

#include <string>

#include "common/status.h"

namespace tessera::cluster {

struct ReplicationServices;

// REQUIRES: services->db and services->membership set.
Result<std::string> ClusterStatusJson(const ReplicationServices& services);
Result<std::string> ClusterTabletsJson(const ReplicationServices& services, const std::string& keyspace,
                                       const std::string& table);

}  // namespace tessera::cluster
