#!/usr/bin/env bash
# Prepared single-row INSERT and SELECT of 1 KB rows through the real CQL
# protocol: starts `tessera server` on a fresh data directory and a loopback
# port, runs `tessera bench` (workloads write and point-read over 100,000
# keys) on the same machine, stops the server by its pid.
# Usage: bench/run_cql_bench.sh [tessera bench options, e.g. --seconds 10 --connections 4 --inflight 16]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" >/dev/null
"$root/scripts/build.sh" release >/dev/null
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
tessera="$root/build/release/tools/tessera"
"$tessera" server --data-dir "$work/data" --listen "127.0.0.1:$port" --admin-listen off >"$work/server.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do grep -q "serving until" "$work/server.log" && break; sleep 0.1; done
echo "== machine"; nproc; grep -m1 'model name' /proc/cpuinfo || true
echo "== steal before: $(grep '^cpu ' /proc/stat | awk '{print $9}')"
"$tessera" bench --port "$port" --workload write --load --recordcount 100000 --value-bytes 1000 "$@"
"$tessera" bench --port "$port" --workload point-read --recordcount 100000 "$@"
echo "== steal after: $(grep '^cpu ' /proc/stat | awk '{print $9}')"
