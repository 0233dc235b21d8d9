// `tessera demo`: the README's first command. Starts a whole node in-process
// (embedded single-node default, CQL on 127.0.0.1:9042), creates the
// access-log table in two designs (timestamp first; the seeds' fix, host
// first) and the metrics table, loads the shipped real datasets through the
// CQL front door with the loader, runs the seeds' queries, and prints a
// report (tablets per table, the write distribution over tablets, hot
// partitions, holds, key advice); writes report.html (with heatmaps of load
// over key space and time) and report.json. Then it keeps serving until
// Ctrl-C, unless --exit-after-report.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

CLI::App* AddDemoCommand(CLI::App& app, int* exit_code);

}  // namespace tessera
