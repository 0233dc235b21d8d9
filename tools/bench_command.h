// `tessera bench`: the workload generator (workload/workload.h,
// workload/runner.h) — YCSB core workloads A-F and the seeds' scenarios
// over CQL, with throughput and latency percentiles as text and JSON.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

CLI::App* AddBenchCommand(CLI::App& app, int* exit_code);

}  // namespace tessera
