#!/usr/bin/env bash
# Runs gocql_routing.go (Debian's gocql, GOPATH mode) against a 3-node
# cluster started here by `tessera cluster start` on free loopback ports
# (127.0.0.1-3), without the placement balancer so that tablets stay where
# they were placed, and stopped by `tessera cluster stop` and, as a last
# resort, by the pids in cluster.json. Usage: run_cluster.sh TESSERA_BINARY
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="$1"
dir="$(mktemp -d /tmp/tessera_go_cluster_XXXXXX)"
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cleanup() {
  "$binary" cluster stop --dir "$dir/cluster" >/dev/null 2>&1 || true
  if [ -f "$dir/cluster/cluster.json" ]; then
    for pid in $(/usr/bin/python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))
print(" ".join(str(p["pid"]) for p in [m["etcd"]] + m["nodes"]))' "$dir/cluster/cluster.json"); do
      kill -9 "$pid" 2>/dev/null || true
    done
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
port="$(free_port)"
admin="$(free_port)"
"$binary" cluster start --nodes 3 --dir "$dir/cluster" --port "$port" --admin-port "$admin" \
  --etcd-port "$(free_port)" --etcd-peer-port "$(free_port)" --internode-port "$(free_port)" \
  --server-arg=--no-placement-balancer
export GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="${GOCACHE:-$dir/gocache}"
timeout 300 go run "$here/gocql_routing.go" "$port" "$admin"
