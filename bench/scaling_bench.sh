#!/usr/bin/env bash
# Issue 11's scaling benchmark (a benchmark, not a test): the same prepared
# 1 KB write workload (`tessera bench --workload write`: a load phase of
# --records rows, then --seconds of writes, the one measured) against 1, 2
# and 3 local nodes (`tessera cluster start --nodes N`: etcd and nodes on
# 127.0.0.1-N), keyspace replication_factor 1, requests at ONE, connections
# spread over every node; the table bench.kv made beforehand WITH
# initial_tablets = 16 so that its tablets spread over the nodes (8/8 on
# 2 nodes, 6/5/5 on 3). One run after the other on this machine, CPU steal
# beside each. Every process is stopped by its pid and its data removed.
# The client routes each request to the node owning its partition's token
# (system.local/system.peers tokens follow the tablet placement), as the
# drivers' token-aware policies do; --no-token-aware sends each to its
# connection's node instead. The "forwarded" column: the share of the tablet
# requests the nodes coordinated without holding the replica (/metrics).
# Usage: bench/scaling_bench.sh [--seconds N] [--records N] [--connections N] [--inflight N] [--no-token-aware] [--server-arg ARG]...
# Prints one row per node count; bench/RESULTS.md records a run.
set -euo pipefail
seconds=10
records=20000
source "$(dirname "$0")/cluster_bench_common.sh"
work=$(mktemp -d /tmp/tessera_scaling_bench.XXXXXX)
cleanup() {
  for d in "$work"/n*; do
    [ -f "$d/cluster.json" ] && "$tessera" cluster stop --dir "$d" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" >&2
for n in 1 2 3; do
  port=$(free_port)
  admin=$(free_port)
  "$tessera" cluster start --nodes "$n" --dir "$work/n$n" --port "$port" --admin-port "$admin" \
    --etcd-port "$(free_port)" --etcd-peer-port "$(free_port)" --internode-port "$(free_port)" "${server_args[@]}" >&2
  "$tessera" shell 127.0.0.1 "$port" -e "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy',
    'replication_factor': 1}; CREATE TABLE bench.kv (p bigint, c int, v blob, PRIMARY KEY (p, c))
    WITH initial_tablets = 16;" >&2
  hosts=$(seq -s, -f "127.0.0.%g" 1 "$n")
  s0=$(steal)
  f0=$(forwarded "$admin" "$n")
  # A request that fails (a time-out under load) is counted, not fatal: `|| true`.
  "$tessera" bench --host "$hosts" --port "$port" --workload write --load --replication-factor 1 --consistency ONE \
    --seconds "$seconds" --connections "$connections" --inflight "$inflight" --recordcount "$records" --value-bytes 1000 \
    "${bench_args[@]}" --json "$work/n$n.json" >&2 || true
  echo "$n $(( $(steal) - s0 ))" >>"$work/steal"
  echo "$n $f0 $(forwarded "$admin" "$n")" >>"$work/forwarded"
  "$tessera" admin status --admin "127.0.0.1:$admin" >&2 || true
  "$tessera" cluster stop --dir "$work/n$n" >&2
done

/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
steal = dict(l.split() for l in open(work + "/steal"))
fwd = {}
for l in open(work + "/forwarded"):
    n, f0, c0, f1, c1 = l.split()
    f, c = int(f1) - int(f0), int(c1) - int(c0)
    fwd[n] = "%.1f%% of %d" % (100.0 * f / c if c else 0, c)
print("| nodes (RF 1, ONE) | writes/s | p99 us | vs 1 node | failed | forwarded | steal ticks |")
print("|---|---|---|---|---|---|---|")
base = None
for n in ("1", "2", "3"):
    d = json.load(open("%s/n%s.json" % (work, n)))
    run = [p for p in d["phases"] if p["phase"] == "run"][-1]
    base = base or run["ops_per_second"]
    print("| %s | %.0f | %d | %.2f | %d | %s | %s |" % (n, run["ops_per_second"], run["all"]["p99_us"],
                                                       run["ops_per_second"] / base, run["errors"], fwd[n], steal[n]))
PY
