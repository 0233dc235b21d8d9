#!/usr/bin/env bash
# Starts `tessera server` on a fresh data directory, waits until it reports
# ready, stops it with SIGTERM by its own pid, and checks a clean exit.
set -euo pipefail
bin="$1"
dir=$(mktemp -d)
log="$dir/server.log"
trap 'kill -9 "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
# A random port may be taken meanwhile (by another test's outgoing
# connection, say): on "Address already in use" retry with another, 5 times.
for _ in $(seq 1 5); do
  port=$((20000 + RANDOM % 12000))  # below the kernel's ephemeral range (32768-)
  admin_port=$((port + 1))
  "$bin" server --data-dir "$dir/data" --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$admin_port" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    grep -q "serving until\|Address already in use" "$log" && break
    sleep 0.1
  done
  grep -q "Address already in use" "$log" || break
  wait "$pid" 2>/dev/null || true
done
grep -q "tessera server ready" "$log" || { cat "$log"; exit 1; }
# The admin port answers with Prometheus metrics. Read whole first: `grep -q`
# leaves at its first match, and under pipefail curl's failed write of the
# rest (exit 23) failed the test.
metrics=$(curl -fsS "http://127.0.0.1:$admin_port/metrics") || { echo "no metrics on the admin port"; exit 1; }
grep -q "^# TYPE" <<<"$metrics" || { echo "no metrics on the admin port"; exit 1; }
grep -q "^# TYPE tessera_cql_request_latency_seconds histogram" <<<"$metrics" || { echo "no front-door latency"; exit 1; }
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
grep -q "shutdown complete" "$log" || { cat "$log"; exit 1; }
[ "$status" -eq 0 ] || { echo "exit status $status"; exit 1; }
"$bin" server --data-dir "$dir/data" --listen "127.0.0.1:$port" --admin-listen off --exit-after-start | grep -q "0 tables" || { echo "restart failed"; exit 1; }
# The same settings from a config file.
printf '[server]\ndata-dir = "%s"\nlisten = "127.0.0.1:%s"\nadmin-listen = "off"\ntablet-split-rows-per-second = 123\n' "$dir/data2" "$port" > "$dir/tessera.toml"
"$bin" server --config "$dir/tessera.toml" --exit-after-start | grep -q "CQL on 127.0.0.1:$port" || { echo "config file ignored"; exit 1; }
[ -d "$dir/data2" ] || { echo "config data-dir ignored"; exit 1; }
echo "server smoke test passed"
