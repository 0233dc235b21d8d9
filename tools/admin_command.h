// `tessera admin`: nodetool-like commands through a cluster node's admin
// port (server/admin_http.h).
//
//   admin status  [--admin HOST:PORT] [-u USER -p PASS] [--json]
//       every node, up (U) or down (D), with its reported load (bytes), the
//       tablet replicas placed on it and its share of them (GET
//       /cluster/status; cluster/cluster_status.h)
//   admin tablets [--admin HOST:PORT] [--keyspace K [--table T]] [--json]
//       every placed tablet of the cluster's tables and its replicas (GET
//       /cluster/tablets)
//   admin move    --keyspace K --table T --start HEX --from NODE --to NODE
//       moves one replica of the tablet starting at HEX online (POST
//       /tablets/move; cluster/tablet_migration.h), printing each stage, its
//       barrier and what was streamed; exit code 1 when it was reverted
//   admin decommission --node NODE
//       moves every tablet replica NODE holds to the other nodes, then
//       removes it from the cluster (POST /nodes/decommission;
//       cluster/node_lifecycle.h); exit code 1 when a move failed
//   admin removenode --node NODE
//       the same for a dead node: its replicas rebuilt from the survivors
//   admin settraceprobability P   trace a share P (0..1) of the node's
//       requests (POST /tracing/probability; nodetool settraceprobability)
//   admin gettraceprobability     the node's current share
//   admin repair  the same as `tessera repair` (tools/repair_command.h)
//
// Exit codes: 0 answered, 1 the node answered with an error (an unknown
// table, a single node), 2 bad arguments or no answer.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void AddAdminCommand(CLI::App& app, int* exit_code);

}  // namespace tessera
