#!/usr/bin/env bash
# Configures and builds Tessera. Usage: scripts/build.sh [debug|release|asan]
# Build trees: build/<mode>. Uses -j2 (the project's machines have 2 cores).
set -euo pipefail
mode="${1:-release}"
root="$(cd "$(dirname "$0")/.." && pwd)"
case "$mode" in
  debug)   type=Debug;          extra=() ;;
  release) type=RelWithDebInfo; extra=() ;;
  asan)    type=Debug;          extra=(-DTESSERA_SANITIZE=ON) ;;
  *) echo "build.sh: unknown mode '$mode' (debug|release|asan)" >&2; exit 2 ;;
esac
dir="$root/build/$mode"
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "${extra[@]}" >/dev/null
cmake --build "$dir" -j2
