#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, and starts a
# single-node Tessera server on the embedded data directory ./data.
# Extra arguments are passed to `tessera server` (see `tessera server --help`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" release
exec "$root/build/release/tools/tessera" server --data-dir "$root/data" "$@"
