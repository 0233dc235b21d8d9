// `tessera repair`: nodetool repair through a node's admin port (POST
// /repair, server/admin_http.h): compares every tablet's replicas by digest
// and repairs those that differ (cluster/repair.h).
//
//   repair [--admin HOST:PORT] [--keyspace K] [--table T] [-u USER -p PASS] [--json]
//
// Prints one line per tablet (table, bounds, replicas' digests, what was
// done) and a summary, or the node's JSON report with --json. Exit codes: 0
// every tablet consistent, 1 a tablet could not be repaired (a replica
// down, a time-out), 2 bad arguments or no answer from the node.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void AddRepairCommand(CLI::App& app, int* exit_code);

}  // namespace tessera
