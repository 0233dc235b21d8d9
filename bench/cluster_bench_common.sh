# Sourced by bench/cluster_bench.sh and bench/scaling_bench.sh (set -euo
# pipefail is theirs): reads --seconds N and --records N into $seconds and
# $records (the caller sets their defaults first) and every --server-arg ARG
# into $server_args (passed to the cluster's nodes; --tls adds the launcher's
# --tls), --no-token-aware into $bench_args (for `tessera bench`), installs the dependencies,
# builds the release binary into $tessera, and defines free_port (a free
# loopback TCP port) and steal (the machine's CPU steal ticks so far).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
connections="${connections:-4}"  # `tessera bench --connections` (each a worker thread)
inflight="${inflight:-4}"        # `tessera bench --inflight`: requests in flight per connection
server_args=()
bench_args=()  # extra `tessera bench` flags
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --records) records="$2"; shift 2 ;;
    --server-arg) server_args+=("--server-arg=$2"); shift 2 ;;
    --tls) server_args+=("--tls"); shift ;;  # `tessera cluster start --tls`: internode and etcd over TLS
    --no-token-aware) bench_args+=("--no-token-aware"); shift ;;  # `tessera bench`: no routing by token
    --connections) connections="$2"; shift 2 ;;
    --inflight) inflight="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
"$root/scripts/install-deps.sh" >/dev/null
"$root/scripts/build.sh" release >/dev/null
tessera="$root/build/release/tools/tessera"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
# forwarded ADMIN_PORT NODES: "forwarded coordinated", the tablet requests
# nodes 127.0.0.1..NODES coordinated without holding a replica, and all they
# coordinated (tessera_coordinator_*_requests_total in /metrics), summed.
forwarded() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, urllib.request
port, nodes = int(sys.argv[1]), int(sys.argv[2])
total = {"tessera_coordinator_forwarded_requests_total": 0.0, "tessera_coordinator_requests_total": 0.0}
for n in range(1, nodes + 1):
    with urllib.request.urlopen("http://127.0.0.%d:%d/metrics" % (n, port), timeout=10) as r:
        for line in r.read().decode().splitlines():
            name = line.split(" ")[0]
            if name in total:
                total[name] += float(line.split()[1])
print("%d %d" % (total["tessera_coordinator_forwarded_requests_total"], total["tessera_coordinator_requests_total"]))
PY
}
