#!/usr/bin/env bash
# What one QUORUM point read costs a 3-node cluster (a benchmark, not a
# test): 3 local nodes (`tessera cluster start --nodes 3`), keyspace
# replication_factor 3, 50,000 rows of 1 KB loaded, then --seconds (20) of
# prepared point reads at QUORUM routed by token; prints reads/s, the nodes'
# CPU per read (user + system, the three processes summed, from
# /proc/<pid>/stat), their context switches per read (every thread's
# voluntary and involuntary ones, /proc/<pid>/task/*/status) and the p99.
# CPU and switches per read are steadier than throughput on a shared VM.
# Then the same two figures per thread role (threads are named: cql-io,
# cql-waiting, delayed-calls, ...; gRPC's own are nexting_thread).
# Usage: bench/cluster_read_cost.sh [--seconds N] [--records N] [--connections N] [--inflight N] [--server-arg ARG]...
# TESSERA=path runs another build (to compare two binaries in one session);
# WORKLOAD=write measures 1 KB QUORUM writes instead of point reads (the same
# figures, per write); WORKLOAD=latest-n QUORUM slice reads of 10 rows of a
# time series (--records rows loaded over 1,000 series), with the internode
# messages each cost (tessera_internode_messages_sent_total, summed).
set -euo pipefail
seconds=20
records=50000
source "$(dirname "$0")/cluster_bench_common.sh"
tessera="${TESSERA:-$tessera}"
workload="${WORKLOAD:-point-read}"
op=read
[ "$workload" = point-read ] || [ "$workload" = latest-n ] || op=write
load=write
[ "$workload" = latest-n ] && load=latest-n
work=$(mktemp -d /tmp/tessera_read_cost.XXXXXX)
cleanup() {
  [ -f "$work/cluster/cluster.json" ] && "$tessera" cluster stop --dir "$work/cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
port=$(free_port)
admin_port=$(free_port)
"$tessera" cluster start --nodes 3 --dir "$work/cluster" --port "$port" --admin-port "$admin_port" \
  --etcd-port "$(free_port)" --etcd-peer-port "$(free_port)" --internode-port "$(free_port)" "${server_args[@]}" >&2
hosts=127.0.0.1,127.0.0.2,127.0.0.3
flags=(--replication-factor 3 --consistency QUORUM --connections "$connections" --inflight "$inflight" --recordcount "$records"
       --value-bytes 1000)
"$tessera" bench --host "$hosts" --port "$port" --workload "$load" --load --seconds 1 "${flags[@]}" >&2
pids=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(str(n["pid"]) for n in json.load(open(sys.argv[1]))["nodes"]))' \
  "$work/cluster/cluster.json")
cpu() { for p in $pids; do awk '{print $14 + $15}' "/proc/$p/stat"; done | awk '{s += $1} END {print s}'; }
# Every thread's name, CPU ticks and context switches, as JSON in $1.
threads() {
  /usr/bin/python3 - "$1" $pids <<'PY'
import json, os, sys
out = {}
for pid in sys.argv[2:]:
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            stat = open(f"/proc/{pid}/task/{t}/stat").read()
            fields = stat[stat.rindex(")") + 2:].split()
            switches = sum(int(l.split()[1]) for l in open(f"/proc/{pid}/task/{t}/status") if "ctxt_switches" in l)
            out[f"{pid}/{t}"] = [comm, int(fields[11]) + int(fields[12]), switches]
        except (FileNotFoundError, ProcessLookupError):
            pass
json.dump(out, open(sys.argv[1], "w"))
PY
}
# "requests messages bytes": the internode requests and messages (gRPC calls) the three nodes sent so
# far, and the key and value bytes they answered (tessera_internode_bytes_served_total).
internode() {
  /usr/bin/python3 - "$admin_port" <<'PY'
import sys, urllib.request
total = {"tessera_internode_requests_sent_total": 0.0, "tessera_internode_messages_sent_total": 0.0,
         "tessera_internode_bytes_served_total": 0.0}
for n in range(1, 4):
    with urllib.request.urlopen("http://127.0.0.%d:%s/metrics" % (n, sys.argv[1]), timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.split(" ")[0] in total:
                total[line.split(" ")[0]] += float(line.split()[1])
print("%d %d %d" % (total["tessera_internode_requests_sent_total"], total["tessera_internode_messages_sent_total"],
                   total["tessera_internode_bytes_served_total"]))
PY
}
switches() { cat $(for p in $pids; do echo "/proc/$p/task/"*/status; done) 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s}'; }
c0=$(cpu); s0=$(switches); threads "$work/threads0.json"; read -r q0 m0 b0 <<< "$(internode)"
"$tessera" bench --host "$hosts" --port "$port" --workload "$workload" --seconds "$seconds" "${flags[@]}" \
  --json "$work/read.json" >&2
c1=$(cpu); s1=$(switches); threads "$work/threads1.json"; read -r q1 m1 b1 <<< "$(internode)"
/usr/bin/python3 - "$work/read.json" "$((c1 - c0))" "$((s1 - s0))" "$(getconf CLK_TCK)" \
  "$work/threads0.json" "$work/threads1.json" "$op" "$((q1 - q0))" "$((m1 - m0))" "$((b1 - b0))" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
r = [p for p in d["phases"] if p["phase"] == "run"][-1]
ticks, switches, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n = r["operations"]
op = sys.argv[7]
requests, messages, served = int(sys.argv[8]), int(sys.argv[9]), int(sys.argv[10])
print("| %ss/s | node CPU per %s | context switches per %s | internode requests / messages per %s "
      "| bytes answered per %s | p99 | errors |" % (op, op, op, op, op))
print("|---|---|---|---|---|---|---|")
print("| %.0f | %.0f us | %.1f | %.2f / %.2f | %.0f | %.1f ms | %d |" % (
    r["ops_per_second"], ticks * 1e6 / hz / n, switches / n, requests / n, messages / n, served / n,
    r["all"]["p99_us"] / 1000.0, r["errors"]))
before, after = json.load(open(sys.argv[5])), json.load(open(sys.argv[6]))
roles = collections.defaultdict(lambda: [0, 0, 0])
for key, (comm, cpu, sw) in after.items():
    cpu0, sw0 = before.get(key, [comm, 0, 0])[1:]
    roles[comm][0] += cpu - cpu0
    roles[comm][1] += sw - sw0
    roles[comm][2] += 1
print()
print("| thread role (3 nodes) | threads | CPU per %s | context switches per %s |" % (op, op))
print("|---|---|---|---|")
for comm, (cpu, sw, count) in sorted(roles.items(), key=lambda kv: -kv[1][0]):
    if cpu or sw >= n / 100:
        print("| %s | %d | %.0f us | %.2f |" % (comm, count, cpu * 1e6 / hz / n, sw / n))
PY
