#!/usr/bin/env bash
# The README's test command: installs dependencies, builds (release mode) and
# runs every test with CTest. Pass "asan" to run the suite under ASan+UBSan.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-release}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$mode"
cd "$root/build/$mode"
ctest --output-on-failure --timeout 900 -j2
