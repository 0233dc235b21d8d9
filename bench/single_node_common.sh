# Sourced by the one-node benchmarks (bench/sustained_updates.sh,
# bench/read_growth.sh) after they read their options (set -euo pipefail is
# theirs; $root is set): installs the dependencies, builds the release binary
# into $tessera, makes the work directory $work (/tmp/tessera_$1.XXXXXX),
# defines stop_server (stops the server whose pid is $pid) and a trap that
# stops it and removes $work on exit, free_port (a free loopback TCP port),
# steal (CPU steal ticks so far), and ops / p99 (throughput and p99 latency
# of a `tessera bench --json` report's first phase).
"$root/scripts/install-deps.sh" >&2
"$root/scripts/build.sh" release >/dev/null
tessera="$root/build/release/tools/tessera"
work=$(mktemp -d "/tmp/tessera_$1.XXXXXX")
pid=""
stop_server() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
ops() { /usr/bin/python3 -c "import json; print(round(json.load(open('$1'))['phases'][0]['ops_per_second']))"; }
p99() { /usr/bin/python3 -c "import json; print(json.load(open('$1'))['phases'][0]['all']['p99_us'])"; }
