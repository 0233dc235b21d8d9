# Sourced by bench/cluster_bench.sh and bench/scaling_bench.sh (set -euo
# pipefail is theirs): reads --seconds N and --records N into $seconds and
# $records (the caller sets their defaults first) and every --server-arg ARG
# into $server_args (passed to the cluster's nodes; --tls adds the launcher's
# --tls), installs the dependencies,
# builds the release binary into $tessera, and defines free_port (a free
# loopback TCP port) and steal (the machine's CPU steal ticks so far).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
server_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --records) records="$2"; shift 2 ;;
    --server-arg) server_args+=("--server-arg=$2"); shift 2 ;;
    --tls) server_args+=("--tls"); shift ;;  # `tessera cluster start --tls`: internode and etcd over TLS
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
"$root/scripts/install-deps.sh" >/dev/null
"$root/scripts/build.sh" release >/dev/null
tessera="$root/build/release/tools/tessera"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
