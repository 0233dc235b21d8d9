#!/usr/bin/env bash
# Issue 30's benchmark (a benchmark, not a test): lightweight transactions on
# 3 local nodes (`tessera cluster start --nodes 3`), keyspace
# replication_factor 3, beside plain QUORUM writes of the same 1 KB rows:
#   - write:      INSERT ... (QUORUM)
#   - lwt-insert: INSERT ... IF NOT EXISTS, a new key each (always applied)
#   - lwt-update: UPDATE ... IF EXISTS on loaded keys (always applied)
#   - counter:    UPDATE ... SET n = n + 1 on one of --records counters
#                 (counter shards: a leader replica reads, then replicates)
# with the Paxos round trips per statement from the nodes' /metrics
# (tessera_paxos_round_trips_total: each phase sent to the replicas counts
# once; Cassandra's Paxos v1 takes 4 - prepare, read, propose, commit - and
# the quorum read here is one more round trip on top of the 3 phases).
# Usage: bench/lwt_bench.sh [--seconds N] [--records N] [--server-arg ARG]...
# Prints a table; bench/RESULTS.md records a run.
set -euo pipefail
seconds=10
records=20000
source "$(dirname "$0")/cluster_bench_common.sh"
work=$(mktemp -d /tmp/tessera_lwt_bench.XXXXXX)
cleanup() {
  [ -f "$work/cluster/cluster.json" ] && "$tessera" cluster stop --dir "$work/cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
flags=(--seconds "$seconds" --connections 4 --inflight 4 --recordcount "$records" --value-bytes 1000
       --replication-factor 3 --consistency QUORUM "${bench_args[@]}")
paxos() {  # the cluster's Paxos round trips and rounds so far: "TRIPS ROUNDS"
  local trips=0 rounds=0 n t r
  for n in 1 2 3; do
    t=$(curl -sf "http://127.0.0.$n:$admin/metrics" | awk '/^tessera_paxos_round_trips_total /{print $2}')
    r=$(curl -sf "http://127.0.0.$n:$admin/metrics" | awk '/^tessera_paxos_rounds_total /{print $2}')
    trips=$(( trips + ${t%.*} )); rounds=$(( rounds + ${r%.*} ))
  done
  echo "$trips $rounds"
}
echo "== machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" >&2
port=$(free_port)
admin=$(free_port)
"$tessera" cluster start --nodes 3 --dir "$work/cluster" --port "$port" --admin-port "$admin" \
  --etcd-port "$(free_port)" --etcd-peer-port "$(free_port)" --internode-port "$(free_port)" "${server_args[@]}" >&2
hosts=127.0.0.1,127.0.0.2,127.0.0.3
"$tessera" bench --host "$hosts" --port "$port" --workload write --load --no-run "${flags[@]}" >&2
for w in write lwt-insert lwt-update counter; do
  before=$(paxos)
  "$tessera" bench --host "$hosts" --port "$port" --workload "$w" "${flags[@]}" --json "$work/$w.json" >&2 || true
  echo "$w $before $(paxos)" >>"$work/paxos"
done
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
paxos = {l.split()[0]: [int(x) for x in l.split()[1:]] for l in open(work + "/paxos")}
print("| statement (3 nodes, RF 3) | ops/s | p50 us | p99 us | errors | Paxos phases per statement |")
print("|---|---|---|---|---|---|")
names = {"write": "INSERT at QUORUM", "lwt-insert": "INSERT ... IF NOT EXISTS", "lwt-update": "UPDATE ... IF EXISTS",
         "counter": "UPDATE ... SET n = n + 1 (counter, QUORUM)"}
for w in ("write", "lwt-insert", "lwt-update", "counter"):
    d = json.load(open("%s/%s.json" % (work, w)))
    r = [p for p in d["phases"] if p["phase"] == "run"][-1]
    t0, r0, t1, r1 = paxos[w]
    ops = r["operations"] if "operations" in r else r["ops_per_second"] * r.get("seconds", 1)
    lwt = w.startswith("lwt")
    per = (t1 - t0) / max(1, ops) if lwt else 0
    print("| %s | %.0f | %d | %d | %d | %s |" % (names[w], r["ops_per_second"], r["all"]["p50_us"], r["all"]["p99_us"],
                                                r["errors"], "%.2f" % per if lwt else "-"))
PY
