#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, and runs the
# demo on the embedded single-node default: a node on ./data serving CQL on
# 127.0.0.1:9042 (admin HTTP on 127.0.0.1:9180), the shipped real datasets
# loaded in two key designs, a report on the terminal and in ./report/, and
# then it keeps serving until Ctrl-C.
# Extra arguments go to `tessera demo` (see `tessera demo --help`), e.g.
# --exit-after-report. To run the bare server: build/release/tools/tessera server.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" release
cd "$root"
exec "$root/build/release/tools/tessera" demo --data-dir "$root/data" --datasets "$root/demo/datasets" \
  --report-dir "$root/report" "$@"
