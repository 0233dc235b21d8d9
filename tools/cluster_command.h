// `tessera cluster`: a local cluster for development and tests, in the
// manner of ccm. Every process runs in the background on loopback
// addresses, and DIR/cluster.json records them (tools/local_cluster.h has
// its frozen fields):
//
//   start --nodes N --dir DIR [--port 9042] [--admin-port 9180]
//         [--etcd-port 2379] [--etcd-peer-port 2380] [--server-arg ARG ...]
//       starts etcd (data in DIR/etcd) and nodes 1..N on 127.0.0.N (data in DIR/nodeN), and returns
//       once every node is serving CQL, alive in etcd, lists every
//       other node in system.peers and sees every node up (its admin
//       port's /cluster/status). Again on a
//       stopped DIR: restarts it on its data.
//   stop --dir DIR            SIGTERM to every node, then etcd (SIGKILL
//                             after 20 s)
//   kill --dir DIR --node N   SIGKILL to node N
//   start-node --dir DIR --node N
//                             restarts node N on its data, with its arguments
//
// Exit codes: 0 done, 1 a process failed (its log's tail is printed), 2 bad
// arguments or a DIR without cluster.json.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void AddClusterCommand(CLI::App& app, int* exit_code);

}  // namespace tessera
