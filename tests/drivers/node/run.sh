#!/usr/bin/env bash
# Runs the Node.js cassandra-driver tests against the given tessera binary.
# Installs the locked npm dependencies on first use (npm registry).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/cassandra-driver ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
TESSERA_BINARY="$1" node --test
