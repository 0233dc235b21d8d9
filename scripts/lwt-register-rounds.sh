#!/usr/bin/env bash
# The long runs of the register workload (issue 30, must-show 1): 3 nodes
# RF 3, 5 clients over 5 keys for 60 s under the nemesis (kill -9 and
# restart, SIGSTOP; as root also a network partition), checked for
# linearizability; with them the compare-and-set counter and the counter
# increments through a kill (must-show 2) for as long; three runs, each on
# a fresh cluster. CI runs the same tests for 10-20 s. Record the printed
# numbers in tests/drivers/LWT_RUNS.md.
#
#   scripts/lwt-register-rounds.sh [SECONDS] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="${TESSERA_BINARY:-$root/build/release/tools/tessera}"
[ -x "$binary" ] || "$root/scripts/build.sh" release
for run in $(seq 1 "${2:-3}"); do
  echo "run $run"
  TESSERA_BINARY="$binary" TESSERA_LWT_SECONDS="${1:-60}" \
    /usr/bin/python3 -m pytest -q -s -p no:cacheprovider "$root/tests/drivers/test_cluster_lwt.py" \
    -k "register or counter"
  TESSERA_BINARY="$binary" TESSERA_COUNTER_SECONDS="${1:-60}" \
    /usr/bin/python3 -m pytest -q -s -p no:cacheprovider "$root/tests/drivers/test_cluster_counters.py" \
    -k "kill"
done
