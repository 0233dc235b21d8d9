#!/usr/bin/env bash
# What one QUORUM point read costs a 3-node cluster (a benchmark, not a
# test): 3 local nodes (`tessera cluster start --nodes 3`), keyspace
# replication_factor 3, 50,000 rows of 1 KB loaded, then --seconds (20) of
# prepared point reads at QUORUM routed by token; prints reads/s, the nodes'
# CPU per read (user + system, the three processes summed, from
# /proc/<pid>/stat), their context switches per read (every thread's
# voluntary and involuntary ones, /proc/<pid>/task/*/status) and the p99.
# CPU and switches per read are steadier than throughput on a shared VM.
# Usage: bench/cluster_read_cost.sh [--seconds N] [--records N] [--server-arg ARG]...
# TESSERA=path runs another build (to compare two binaries in one session).
set -euo pipefail
seconds=20
records=50000
source "$(dirname "$0")/cluster_bench_common.sh"
tessera="${TESSERA:-$tessera}"
work=$(mktemp -d /tmp/tessera_read_cost.XXXXXX)
cleanup() {
  [ -f "$work/cluster/cluster.json" ] && "$tessera" cluster stop --dir "$work/cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
port=$(free_port)
"$tessera" cluster start --nodes 3 --dir "$work/cluster" --port "$port" --admin-port "$(free_port)" \
  --etcd-port "$(free_port)" --etcd-peer-port "$(free_port)" --internode-port "$(free_port)" "${server_args[@]}" >&2
hosts=127.0.0.1,127.0.0.2,127.0.0.3
flags=(--replication-factor 3 --consistency QUORUM --connections 4 --inflight 4 --recordcount "$records"
       --value-bytes 1000)
"$tessera" bench --host "$hosts" --port "$port" --workload write --load --seconds 1 "${flags[@]}" >&2
pids=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(str(n["pid"]) for n in json.load(open(sys.argv[1]))["nodes"]))' \
  "$work/cluster/cluster.json")
cpu() { for p in $pids; do awk '{print $14 + $15}' "/proc/$p/stat"; done | awk '{s += $1} END {print s}'; }
switches() { cat $(for p in $pids; do echo "/proc/$p/task/"*/status; done) 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s}'; }
c0=$(cpu); s0=$(switches)
"$tessera" bench --host "$hosts" --port "$port" --workload point-read --seconds "$seconds" "${flags[@]}" \
  --json "$work/read.json" >&2
c1=$(cpu); s1=$(switches)
/usr/bin/python3 - "$work/read.json" "$((c1 - c0))" "$((s1 - s0))" "$(getconf CLK_TCK)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = [p for p in d["phases"] if p["phase"] == "run"][-1]
ticks, switches, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n = r["operations"]
print("| reads/s | node CPU per read | context switches per read | p99 | errors |")
print("|---|---|---|---|---|")
print("| %.0f | %.0f us | %.1f | %.1f ms | %d |" % (r["ops_per_second"], ticks * 1e6 / hz / n, switches / n,
                                             r["all"]["p99_us"] / 1000.0, r["errors"]))
PY
