#!/usr/bin/env bash
# Runs gocql_check.go (the Go driver from Debian's golang-github-gocql-gocql-dev,
# in GOPATH mode: no module download) against a tessera server started here on
# a free loopback port and stopped by its pid. Usage: run.sh TESSERA_BINARY
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="$1"
dir="$(mktemp -d /tmp/tessera_go_XXXXXX)"
port="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$binary" server --data-dir "$dir/data" --listen "127.0.0.1:$port" --admin-listen off > "$dir/server.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done
export GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="${GOCACHE:-$dir/gocache}"
timeout 300 go run "$here/gocql_check.go" 127.0.0.1 "$port"
