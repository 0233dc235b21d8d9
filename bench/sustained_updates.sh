#!/usr/bin/env bash
# bench/sustained_updates.sh: does a node slow down under sustained updates?
# (issue 32, must-show 1). One `tessera server` on a fresh data directory:
#   1. load --records YCSB records (10 fields of 100 bytes);
#   2. YCSB-A (50% reads, 50% updates, zipfian) for --minutes, in windows of
#      --window seconds, each window one `tessera bench` run; after each window
#      the node's /metrics: compaction debt, level-0 files, memtables, live
#      write-ahead logs and the merge-operand histogram (operands folded per
#      full merge, and the share of merges folding more than 16);
#   3. YCSB-C (read only) for one window right after;
# then a second server on a fresh directory: load, and YCSB-C for one window
# (the fresh-data baseline). Prints a TSV table and the ratios the issue asks:
# last window / first window of YCSB-A, and YCSB-C after / YCSB-C fresh.
# Every server is stopped by its own pid and its data removed.
# Usage: bench/sustained_updates.sh [--records N] [--minutes N] [--window S]
#                                   [--connections N] [--inflight N] [--server-arg ARG]...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
records=200000
minutes=10
window=60
connections=4
inflight=4
server_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records="$2"; shift 2 ;;
    --minutes) minutes="$2"; shift 2 ;;
    --window) window="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --inflight) inflight="$2"; shift 2 ;;
    --server-arg) server_args+=("$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source "$root/bench/single_node_common.sh" sustained

start_server() {  # DIR
  port=$(free_port)
  admin=$(free_port)
  "$tessera" server --data-dir "$1" --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$admin" \
    "${server_args[@]}" >"$1.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do grep -q "tessera server ready" "$1.log" && return 0; sleep 0.1; done
  echo "server did not start; log:" >&2
  cat "$1.log" >&2
  exit 1
}

# metrics: "pending_bytes l0 memtable_bytes imm wal_files wal_bytes merges operands over16"
metrics() {
  curl -s "http://127.0.0.1:$admin/metrics" | /usr/bin/python3 -c '
import sys
m = {}
for line in sys.stdin:
    if line.startswith("#") or " " not in line: continue
    k, v = line.rsplit(" ", 1)
    m[k] = float(v)
g = lambda k: int(m.get(k, 0))
count = g("tessera_storage_merge_operands_count")
upto16 = g("tessera_storage_merge_operands_bucket{le=\"16\"}")
print(g("tessera_storage_pending_compaction_bytes"), g("tessera_storage_level0_files"),
      g("tessera_storage_memtable_bytes"), g("tessera_storage_immutable_memtables"),
      g("tessera_storage_wal_files"), g("tessera_storage_wal_bytes"), count,
      g("tessera_storage_merge_operands_sum"), count - upto16)'
}

tb() { "$tessera" bench --port "$port" --connections "$connections" --inflight "$inflight" --recordcount "$records" "$@"; }

echo "== machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" >&2
echo "== server args: ${server_args[*]:-(defaults)}" >&2
start_server "$work/sustained"
echo "== load $records records" >&2
tb --workload a --load --no-run >/dev/null
printf 'phase\twindow\tops_per_s\tp99_us\tsteal\tpending_compaction_bytes\tlevel0_files\tmemtable_bytes\timmutable_memtables\twal_files\twal_bytes\tfull_merges\tmerge_operands\tmerges_over_16\n'
windows=$(( minutes * 60 / window ))
first=""
last=""
prev=(0 0 0 0 0 0 0 0 0)
for w in $(seq 1 "$windows"); do
  s0=$(steal)
  tb --workload a --seconds "$window" --json "$work/a_$w.json" >/dev/null
  s1=$(steal)
  read -r -a cur <<<"$(metrics)"
  # merges, operands and merges over 16 per window (the histogram counts since start)
  printf 'ycsb-a\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n' "$w" "$(ops "$work/a_$w.json")" \
    "$(p99 "$work/a_$w.json")" $((s1 - s0)) "${cur[0]}" "${cur[1]}" "${cur[2]}" "${cur[3]}" "${cur[4]}" "${cur[5]}" \
    $((cur[6] - prev[6])) $((cur[7] - prev[7])) $((cur[8] - prev[8]))
  prev=("${cur[@]}")
  [ -z "$first" ] && first=$(ops "$work/a_$w.json")
  last=$(ops "$work/a_$w.json")
done
s0=$(steal)
tb --workload c --seconds "$window" --json "$work/c_after.json" >/dev/null
s1=$(steal)
read -r -a cur <<<"$(metrics)"
printf 'ycsb-c after\t-\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n' "$(ops "$work/c_after.json")" \
  "$(p99 "$work/c_after.json")" $((s1 - s0)) "${cur[0]}" "${cur[1]}" "${cur[2]}" "${cur[3]}" "${cur[4]}" "${cur[5]}" \
  $((cur[6] - prev[6])) $((cur[7] - prev[7])) $((cur[8] - prev[8]))
du -sh "$work/sustained" | awk '{print "== data directory after: " $1}' >&2
stop_server
rm -rf "$work/sustained"

start_server "$work/fresh"
tb --workload a --load --no-run >/dev/null
s0=$(steal)
tb --workload c --seconds "$window" --json "$work/c_fresh.json" >/dev/null
s1=$(steal)
printf 'ycsb-c fresh\t-\t%s\t%s\t%d\n' "$(ops "$work/c_fresh.json")" "$(p99 "$work/c_fresh.json")" $((s1 - s0))
stop_server
/usr/bin/python3 -c "
first, last, after, fresh = $first, $last, $(ops "$work/c_after.json"), $(ops "$work/c_fresh.json")
print('ycsb-a last/first window: %.2f (%d / %d ops/s)' % (last / first, last, first))
print('ycsb-c after/fresh: %.2f (%d / %d ops/s)' % (after / fresh, after, fresh))"
