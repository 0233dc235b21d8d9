#!/usr/bin/env bash
# Runs the storage micro-benchmarks and RocksDB's db_bench (Debian
# rocksdb-tools) in one go on this machine, with the same value size
# (1000 bytes), key count (1,000,000) and one thread, and prints both.
# Results are recorded by hand in bench/RESULTS.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" >/dev/null
"$root/scripts/build.sh" release >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== machine"; nproc; grep -m1 'model name' /proc/cpuinfo || true; free -g | head -2
echo "== db_bench fillrandom (1 thread, 1000-byte values, 1M keys, WAL on, no sync)"
db_bench --benchmarks=fillrandom --num=1000000 --value_size=1000 --threads=1 --db="$work/db" \
  --compression_type=lz4 2>&1 | grep -E '^fillrandom'
echo "== db_bench readrandom (same database, 1M reads)"
db_bench --benchmarks=readrandom --use_existing_db=1 --num=1000000 --reads=1000000 --value_size=1000 \
  --threads=1 --db="$work/db" --compression_type=lz4 --bloom_bits=10 2>&1 | grep -E '^readrandom'
echo "== tessera storage_bench"
TESSERA_BENCH_DIR="$work/tessera" "$root/build/release/bench/storage_bench" --benchmark_min_time=3
