// The `tessera` command line: server, load, shell, demo, bench and cluster.
#include <CLI/CLI.hpp>

#include "tools/bench_command.h"
#include "tools/cluster_command.h"
#include "tools/demo_command.h"
#include "tools/load_command.h"
#include "tools/repair_command.h"
#include "tools/admin_command.h"
#include "tools/server_command.h"
#include "tools/shell_command.h"

namespace {

// Balancer thresholds and guardrails, as flags (and config-file keys).
void AddTabletOptions(CLI::App* cmd, tessera::ServerConfig* c) {
  auto& b = c->balancer;
  auto micros = [](int64_t* target) {
    return [target](double seconds) { *target = static_cast<int64_t>(seconds * 1e6); };
  };
  cmd->add_option("--tablet-balancer", b.enabled, "split and merge tablets automatically")->capture_default_str();
  cmd->add_option_function<double>("--tablet-balance-interval-seconds", micros(&b.interval_micros),
                                   "seconds between balancer rounds (default 1)");
  cmd->add_option("--tablet-split-size-bytes", b.split_size_bytes, "split a tablet above this size")
      ->capture_default_str();
  cmd->add_option("--tablet-split-rows-per-second", b.split_rows_per_second,
                  "split a tablet whose rows read + written per second stay above this")->capture_default_str();
  cmd->add_option("--tablet-split-bytes-per-second", b.split_bytes_per_second,
                  "split a tablet whose bytes read + written per second stay above this")->capture_default_str();
  cmd->add_option_function<double>("--tablet-split-sustain-seconds", micros(&b.split_sustain_micros),
                                   "how long the load must stay above the threshold (default 10)");
  cmd->add_option_function<double>("--tablet-merge-min-age-seconds", micros(&b.merge_min_age_micros),
                                   "tablets younger than this are not merged (default 60)");
  cmd->add_option("--tablet-max-per-table", b.max_tablets_per_table, "no splits beyond this many tablets")
      ->capture_default_str();
  auto& g = c->guardrails;
  cmd->add_option("--guardrail-key-warn-bytes", g.key_warn_bytes)->capture_default_str();
  cmd->add_option("--guardrail-key-fail-bytes", g.key_fail_bytes)->capture_default_str();
  cmd->add_option("--guardrail-cell-warn-bytes", g.cell_warn_bytes)->capture_default_str();
  cmd->add_option("--guardrail-cell-fail-bytes", g.cell_fail_bytes)->capture_default_str();
  cmd->add_option("--guardrail-row-warn-bytes", g.row_warn_bytes)->capture_default_str();
  cmd->add_option("--guardrail-partition-rows-warn", g.partition_rows_warn)->capture_default_str();
  cmd->add_option("--guardrail-partition-rows-fail", g.partition_rows_fail)->capture_default_str();
  cmd->add_option("--guardrail-partition-bytes-warn", g.partition_bytes_warn)->capture_default_str();
  cmd->add_option("--guardrail-partition-bytes-fail", g.partition_bytes_fail, "0: no limit")->capture_default_str();
  cmd->add_option("--guardrail-tombstone-warn", g.tombstone_warn)->capture_default_str();
  cmd->add_option("--guardrail-tombstone-fail", g.tombstone_fail)->capture_default_str();
  auto& k = c->keyviz;
  cmd->add_option_function<double>("--keyviz-column-seconds", micros(&k.column_micros),
                                   "Key Visualizer: seconds per time column (default 60)");
  cmd->add_option("--keyviz-columns", k.max_columns, "Key Visualizer: columns kept (the oldest go first)")
      ->capture_default_str();
  cmd->add_option("--keyviz-max-rows", k.max_rows, "Key Visualizer: key rows per column, over all tables")
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a wide-column database that keeps data and load evenly spread"};
  app.require_subcommand(1);

  tessera::ServerConfig server;
  auto* cmd = app.add_subcommand("server", "run a node on an embedded data directory (alone, or in a cluster with --etcd)");
  cmd->add_option("--data-dir", server.data_dir, "data directory (created if missing)")->capture_default_str();
  cmd->add_option("--listen", server.listen, "address:port of the CQL listener (loopback by default)")
      ->capture_default_str();
  cmd->add_option("--admin-listen", server.admin_listen, "address:port of the admin HTTP port (metrics), or off")
      ->capture_default_str();
  cmd->add_flag("--exit-after-start", server.exit_after_start, "open the database, report and exit");
  cmd->add_option("--block-cache-bytes", server.block_cache_bytes,
                  "RocksDB block cache size (0: a quarter of the memory the machine or its control group allows)")->capture_default_str();
  cmd->add_option("--request-threads", server.request_threads,
                  "threads running CQL requests; a connection's requests run concurrently (0: one after the "
                  "other; -1: one per core, 64 with --commitlog-sync batch or group)")
      ->check(CLI::Range(-1, 256))->capture_default_str();
  cmd->add_option("--waiting-request-threads", server.waiting_request_threads,
                  "threads of their own for the CQL requests of a cluster node that may wait for other nodes on "
                  "their thread (0: none, they take request threads; -1: 4 per core in a cluster, else 0)")
      ->check(CLI::Range(-1, 256))->capture_default_str();
  cmd->add_flag("--enable-user-defined-functions", server.enable_user_defined_functions,
                "allow CREATE FUNCTION / AGGREGATE (LANGUAGE lua, sandboxed: 1 s and 16 MiB per call), as Cassandra's "
                "enable_user_defined_functions");
  cmd->add_option("--commitlog-sync", server.commitlog_sync,
                  "when an acknowledged write is durable against a power loss: periodic (fsync every "
                  "--commitlog-sync-period-ms), batch (after its fsync) or group (batch, one fsync per window)")
      ->check(CLI::IsMember({"periodic", "batch", "group"}))
      ->capture_default_str();
  cmd->add_option("--commitlog-sync-period-ms", server.commitlog_sync_period_ms, "periodic: fsync interval")
      ->check(CLI::Range(int64_t{1}, int64_t{3'600'000}))
      ->capture_default_str();
  cmd->add_option("--commitlog-sync-group-window-ms", server.commitlog_sync_group_window_ms,
                  "group: at most one fsync per this window")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  cmd->add_option("--max-successive-merges", server.max_successive_merges,
                  "merge operands of one row in a memtable before a write folds them into a whole value (0: unbounded)")
      ->capture_default_str();
  cmd->add_option("--etcd", server.etcd, "etcd client URL (http://host:port): join the cluster registered there");
  cmd->add_option("--node-address", server.node_address, "this node's address for peers and drivers (default: --listen's)");
  cmd->add_option("--dc", server.data_center, "data center of this node")->capture_default_str();
  cmd->add_option("--rack", server.rack, "rack of this node")->capture_default_str();
  cmd->add_option("--cluster-lease-seconds", server.lease_ttl_seconds,
                  "TTL of the node's etcd lease: how long etcd keeps a silent node's liveness key")
      ->check(CLI::Range(2, 600))->capture_default_str();
  cmd->add_option("--failure-detector-timeout-ms", server.failure_detector_timeout_ms,
                  "a peer silent to this node's pings for this long is down to it (0: liveness follows the "
                  "etcd lease)")
      ->check(CLI::Range(0, 600'000))->capture_default_str();
  cmd->add_option("--internode-port", server.internode_port,
                  "port of internode requests (gRPC) on --node-address, in a cluster")
      ->check(CLI::Range(1, 65535))->capture_default_str();
  cmd->add_option("--write-request-timeout-ms", server.write_request_timeout_ms,
                  "how long a coordinator waits for replicas to acknowledge a write")
      ->check(CLI::Range(1, 600000))->capture_default_str();
  cmd->add_option("--read-request-timeout-ms", server.read_request_timeout_ms,
                  "how long a coordinator waits for replicas to answer a read")
      ->check(CLI::Range(1, 600000))->capture_default_str();
  cmd->add_option("--max-hint-window-seconds", server.max_hint_window_seconds,
                  "hints older than this are dropped, not delivered (Cassandra's max_hint_window)")
      ->check(CLI::Range(1, 30 * 24 * 3600))->capture_default_str();
  cmd->add_option("--max-hints-mb", server.max_hints_mb, "hints kept per down replica, at most (MiB)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--load-report-seconds", server.load_report_seconds,
                  "how often a cluster node reports its load (bytes, tablets) to etcd for admin status")
      ->check(CLI::Range(1, 3600))->capture_default_str();
  cmd->add_flag("--placement-balancer,!--no-placement-balancer", server.placement_balancer,
                "in a cluster: move tablet replicas between nodes until each holds as many, stores about as many "
                "bytes and serves about as many requests (one node leads, elected through etcd); on by default, "
                "--no-placement-balancer for clusters whose tablets are moved by hand");
  cmd->add_option("--placement-balancer-interval-ms", server.placement_balancer_interval_ms,
                  "how often the leading node plans moves")
      ->check(CLI::Range(100, 3600000))->capture_default_str();
  cmd->add_option("--placement-balancer-min-bytes", server.placement_balancer_min_bytes,
                  "bytes a node must store above the mean (and 1.25 x the mean) before replicas move for bytes")
      ->capture_default_str();
  cmd->add_option("--stream-mib-per-second", server.stream_mib_per_second,
                  "MiB/s the tablet migrations this node drives stream at most, all together (0: no limit)")
      ->check(CLI::Range(0, 1 << 20))->capture_default_str();
  cmd->add_option("--placement-balancer-max-moves-per-node", server.placement_balancer_max_moves_per_node,
                  "tablet moves a node may be the source or target of at once")
      ->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--failpoint", server.failpoints,
                  "NAME=ACTION (pause, error, off): hold or fail an operation at a named stage, for fault tests "
                  "(common/failpoints.h lists the names); repeatable")
      ->take_all();
  AddTabletOptions(cmd, &server);
  tessera::AddSecurityOptions(cmd, &server.security);
  // A config file sets the same options (TOML or INI, a [server] section with the long flag names:
  // data-dir = "...", listen = "..."); flags given on the command line win.
  app.set_config("--config", "", "read options from a TOML/INI file ([server] section, long flag names)");
  cmd->fallthrough();  // `tessera server --config FILE` as well as `tessera --config FILE server`

  int exit_code = 0;
  tessera::AddLoadCommand(app, &exit_code);
  tessera::AddShellCommand(app, &exit_code);
  tessera::AddDemoCommand(app, &exit_code);
  tessera::AddBenchCommand(app, &exit_code);
  tessera::AddClusterCommand(app, &exit_code);
  tessera::AddRepairCommand(app, &exit_code);
  tessera::AddAdminCommand(app, &exit_code);

  CLI11_PARSE(app, argc, argv);
  if (cmd->parsed()) return tessera::RunServer(server);
  return exit_code;
}
