#!/usr/bin/env bash
# bench/read_growth.sh: do point reads stay fast when the data outgrows
# memory? (issue 32, must-show 4). One `tessera server` with default settings
# (the block cache sized from the machine's memory) on a fresh data directory:
#   1. load --small rows of --value-bytes (default 1M of 1 KB), wait until
#      compaction debt is gone, warm up for --warmup seconds of point reads,
#      then point reads for --seconds: the small figure;
#   2. load up to --large rows (default 10M) into the same table, wait for
#      compaction again, warm up, point reads: the large figure.
# Point reads are uniform over the loaded keys (tessera bench
# --workload point-read). After each measured run the node's /metrics give
# the block cache hit rate (data blocks), the bloom filters' useful share and
# false positives, level-0 files and the data size, counted over that run only.
# Prints a TSV table and the ratio large / small.
# Every server is stopped by its own pid and its data removed.
# Usage: bench/read_growth.sh [--small N] [--large N] [--value-bytes N] [--seconds S] [--warmup S]
#                             [--connections N] [--inflight N] [--server-arg ARG]...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
small=1000000
large=10000000
value_bytes=1000
seconds=20
warmup=20
connections=4
inflight=4
server_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small="$2"; shift 2 ;;
    --large) large="$2"; shift 2 ;;
    --value-bytes) value_bytes="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --inflight) inflight="$2"; shift 2 ;;
    --server-arg) server_args+=("$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source "$root/bench/single_node_common.sh" growth

port=$(free_port)
admin=$(free_port)
"$tessera" server --data-dir "$work/data" --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$admin" \
  "${server_args[@]}" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do grep -q "tessera server ready" "$work/server.log" && break; sleep 0.1; done
grep -q "tessera server ready" "$work/server.log" || { cat "$work/server.log" >&2; exit 1; }
tb() { "$tessera" bench --port "$port" --connections "$connections" --inflight "$inflight" "$@"; }

# The storage counters of /metrics as one JSON object (name{labels} -> value).
snapshot() {
  curl -s "http://127.0.0.1:$admin/metrics" | /usr/bin/python3 -c '
import json, sys
m = {}
for line in sys.stdin:
    if line.startswith("tessera_storage_"):
        k, v = line.rsplit(" ", 1)
        m[k] = float(v)
print(json.dumps(m))'
}
wait_for_compactions() {  # until no compaction debt and none running (at most 30 minutes)
  for _ in $(seq 1 1800); do
    if snapshot | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin); sys.exit(0 if m.get("tessera_storage_pending_compaction_bytes",1)==0 and m.get("tessera_storage_running_compactions",1)==0 else 1)'; then return 0; fi
    sleep 1
  done
}

printf 'rows\tops_per_s\tp99_us\tdata_block_hit_rate\tbloom_useful_share\tbloom_false_positive_rate\tlevel0_files\tcache_capacity_gib\tcache_used_gib\tload_s\tcompaction_wait_s\n'
for n in "$small" "$large"; do
  t0=$(date +%s)
  tb --workload write --load --no-run --recordcount "$n" --value-bytes "$value_bytes" >/dev/null
  t1=$(date +%s)
  wait_for_compactions
  t2=$(date +%s)
  tb --workload point-read --recordcount "$n" --seconds "$warmup" >/dev/null
  before=$(snapshot)
  tb --workload point-read --recordcount "$n" --seconds "$seconds" --json "$work/read_$n.json" >/dev/null
  after=$(snapshot)
  /usr/bin/python3 - "$n" "$(ops "$work/read_$n.json")" "$(p99 "$work/read_$n.json")" "$before" "$after" \
    "$((t1 - t0))" "$((t2 - t1))" <<'PY'
import json, sys
n, ops, p99, before, after, load_s, wait_s = sys.argv[1:]
b, a = json.loads(before), json.loads(after)
d = lambda k: a.get(k, 0) - b.get(k, 0)
hits = d('tessera_storage_block_cache_hits_total{block="data"}')
misses = d('tessera_storage_block_cache_misses_total{block="data"}')
useful = d('tessera_storage_bloom_filter_total{outcome="useful"}')
positive = d('tessera_storage_bloom_filter_total{outcome="positive"}')
true_positive = d('tessera_storage_bloom_filter_total{outcome="true_positive"}')
probes = useful + positive
print("\t".join(str(x) for x in [
    n, ops, p99,
    "%.3f" % (hits / (hits + misses)) if hits + misses else "-",
    "%.3f" % (useful / probes) if probes else "-",
    "%.4f" % ((positive - true_positive) / (useful + positive - true_positive)) if useful + positive - true_positive else "-",
    int(a.get("tessera_storage_level0_files", 0)),
    "%.2f" % (a.get("tessera_storage_block_cache_capacity_bytes", 0) / 2**30),
    "%.2f" % (a.get("tessera_storage_block_cache_usage_bytes", 0) / 2**30),
    load_s, wait_s]))
PY
done | tee "$work/table.tsv"
/usr/bin/python3 - "$work/table.tsv" <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip()]
small, large = rows[0], rows[1]
print("point reads at %s rows / at %s rows: %s / %s ops/s = %.2f (target >= 0.8)" % (
    large[0], small[0], large[1], small[1], float(large[1]) / float(small[1])))
PY
du -sh "$work/data" | sed 's/^/data directory: /'
