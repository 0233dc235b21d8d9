#!/usr/bin/env bash
# Issue 10's cluster benchmark (a benchmark, not a test): the same prepared
# 1 KB write and point-read workloads against
#   - 3 local nodes (`tessera cluster start --nodes 3`: etcd and nodes on
#     127.0.0.1-3), keyspace replication_factor 3, requests at QUORUM,
#     connections spread over the three nodes as coordinators;
#   - 1 embedded node (`tessera server`, no etcd), replication_factor 1, ONE;
# one after the other in one run on this machine, with CPU steal beside each,
# and the share of the cluster's tablet requests forwarded (coordinated by a
# node holding no replica: none at RF 3 on 3 nodes). The client routes by
# token as the drivers do (--no-token-aware: not).
# Every process is stopped by its pid and its data removed.
# Usage: bench/cluster_bench.sh [--seconds N] [--records N] [--connections N] [--inflight N] [--tls]
#                               [--no-token-aware] [--server-arg ARG]...
# (--connections, --inflight: the load generator's, 4 and 4 by default, for both runs)
# (--server-arg: a flag for the cluster's nodes, e.g. --server-arg --request-threads=8)
# Prints both results and their ratios; bench/RESULTS.md records a run.
set -euo pipefail
seconds=10
records=100000
connections=4
inflight=4
source "$(dirname "$0")/cluster_bench_common.sh"
work=$(mktemp -d /tmp/tessera_cluster_bench.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  [ -f "$work/cluster/cluster.json" ] && "$tessera" cluster stop --dir "$work/cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
bench_flags=(--seconds "$seconds" --connections "$connections" --inflight "$inflight" --recordcount "$records" --value-bytes 1000
             "${bench_args[@]}")
admin=""  # the cluster's admin port, for the forwarded share

run_pair() {  # NAME HOSTS PORT RF CONSISTENCY
  local name="$1" hosts="$2" port="$3" rf="$4" cl="$5" s0 f0
  [ -n "$admin" ] && f0=$(forwarded "$admin" 3)
  s0=$(steal)
  # A request that fails (a time-out under load) is counted, not fatal: `|| true`.
  "$tessera" bench --host "$hosts" --port "$port" --workload write --load --replication-factor "$rf" \
    --consistency "$cl" "${bench_flags[@]}" --json "$work/$name-write.json" >&2 || true
  echo "$name write steal $(( $(steal) - s0 ))" >>"$work/steal"
  s0=$(steal)
  "$tessera" bench --host "$hosts" --port "$port" --workload point-read --replication-factor "$rf" \
    --consistency "$cl" "${bench_flags[@]}" --json "$work/$name-read.json" >&2 || true
  echo "$name read steal $(( $(steal) - s0 ))" >>"$work/steal"
  [ -n "$admin" ] && echo "$name $f0 $(forwarded "$admin" 3)" >>"$work/forwarded"
  return 0
}

echo "== machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" >&2
port=$(free_port)
admin=$(free_port)
"$tessera" cluster start --nodes 3 --dir "$work/cluster" --port "$port" --admin-port "$admin" \
  --etcd-port "$(free_port)" --etcd-peer-port "$(free_port)" --internode-port "$(free_port)" "${server_args[@]}" >&2
echo "== 3 nodes, RF 3, QUORUM" >&2
run_pair cluster 127.0.0.1,127.0.0.2,127.0.0.3 "$port" 3 QUORUM
"$tessera" cluster stop --dir "$work/cluster" >&2
admin=""

port=$(free_port)
"$tessera" server --data-dir "$work/single" --listen "127.0.0.1:$port" --admin-listen off >"$work/single.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "serving until" "$work/single.log" && break; sleep 0.1; done
echo "== 1 node, RF 1, ONE" >&2
run_pair single 127.0.0.1 "$port" 1 ONE

/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
steal = dict((" ".join(l.split()[:2]), l.split()[-1]) for l in open(work + "/steal"))
def run(name, op):
    d = json.load(open("%s/%s-%s.json" % (work, name, op)))
    r = [p for p in d["phases"] if p["phase"] == "run"][-1]
    load = [p for p in d["phases"] if p["phase"] == "load"]
    return r["ops_per_second"], r["all"]["p99_us"], r["errors"] + sum(p["errors"] for p in load)
print("| workload | 3 nodes RF3 QUORUM ops/s | p99 us | 1 node RF1 ONE ops/s | p99 us | throughput ratio | p99 ratio | steal ticks (3 / 1) |")
print("|---|---|---|---|---|---|---|---|")
for op in ("write", "read"):
    c, s = run("cluster", op), run("single", op)
    print("| %s | %.0f | %d | %.0f | %d | %.2f | %.2f | %s / %s |" % (
        "prepared 1 KB write" if op == "write" else "prepared point read", c[0], c[1], s[0], s[1], c[0] / s[0],
        c[1] / s[1], steal["cluster " + op], steal["single " + op]))
    if c[2] or s[2]:
        print("%s: requests failed (time-outs), cluster %d, single %d" % (op, c[2], s[2]))
for l in open(work + "/forwarded"):
    _, f0, c0, f1, c1 = l.split()
    f, c = int(f1) - int(f0), int(c1) - int(c0)
    print("3 nodes: %.1f%% of %d coordinated tablet requests forwarded (no local replica)" % (100.0 * f / c if c else 0, c))
PY
