#!/usr/bin/env bash
# The long run of the cluster fault test (issue 10, must-show 2 and 4):
# three rounds of 30 s of QUORUM writes through kill -9 of a replica and of
# the control connection's node, then every acknowledged write read back at
# ALL; and the per-key history check over 30 s. CI runs the same test with
# 10 s rounds. Record the printed numbers in tests/drivers/CLUSTER_FAULTS.md.
#
#   scripts/cluster-fault-rounds.sh [SECONDS_PER_ROUND] [ROUNDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="${TESSERA_BINARY:-$root/build/release/tools/tessera}"
[ -x "$binary" ] || "$root/scripts/build.sh" release
TESSERA_BINARY="$binary" TESSERA_FAULT_ROUND_SECONDS="${1:-30}" TESSERA_FAULT_ROUNDS="${2:-3}" \
  /usr/bin/python3 -m pytest -q -s -p no:cacheprovider "$root/tests/drivers/test_cluster_faults.py"
