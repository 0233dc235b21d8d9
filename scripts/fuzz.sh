#!/usr/bin/env bash
# Builds and runs a libFuzzer target with clang (ASan + UBSan).
# Usage: scripts/fuzz.sh TARGET [SECONDS]
#   TARGET: key_decoder | frame_decoder | cql_parser | response_decoder | executor | auth | internode
# The small decoder targets compile from their few sources; `executor`,
# `auth` and `internode` need most of the tree and are built by CMake with clang
# (TESSERA_FUZZ=ON, a unity build) in build/fuzz-cmake, incrementally; the executor's corpus
# is seeded from the test suite, auth's from fuzz/auth_seeds.txt, internode's by
# the fuzzer itself (TESSERA_INTERNODE_SEEDS) from the rows of its tables.
# The corpus lives in build/fuzz/<target>_corpus; the last line printed is
# libFuzzer's summary with the number of executions.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:?usage: scripts/fuzz.sh TARGET [SECONDS]}"
seconds="${2:-60}"
out="$root/build/fuzz"
mkdir -p "$out/${target}_corpus"
case "$target" in
  key_decoder)
    sources=(src/common/status.cc src/common/bytes.cc src/types/cql_type.cc src/types/value.cc
             src/types/serialization.cc src/types/value_compare.cc src/types/decimal_digits.cc src/types/schema.cc
             src/keys/murmur3.cc src/keys/token.cc src/keys/key_encoding.cc src/keys/storage_key.cc
             src/storage/row_fragment.cc src/storage/partition_header.cc src/storage/merge_operator.cc)
    libs=(-lrocksdb) ;;
  frame_decoder)
    sources=(src/common/status.cc src/common/bytes.cc src/types/cql_type.cc src/types/schema.cc
             src/cql/protocol/frame.cc src/cql/protocol/wire.cc src/cql/protocol/compression.cc
             src/cql/protocol/requests.cc src/cql/protocol/segment.cc)
    libs=(-llz4 -lsnappy -lz) ;;
  response_decoder)
    sources=(src/common/status.cc src/common/bytes.cc src/types/cql_type.cc src/types/schema.cc
             src/cql/protocol/wire.cc src/cql/protocol/responses.cc src/cql/protocol/response_decoding.cc)
    libs=() ;;
  cql_parser)
    # Every file of the parser (a new statement family is a new file there).
    sources=(src/common/status.cc src/common/bytes.cc "$root"/src/cql/parser/*.cc)
    libs=() ;;
  executor|auth|internode) ;;
  *) echo "fuzz.sh: unknown target $target" >&2; exit 2 ;;
esac
cd "$root"
if [ "$target" = executor ] || [ "$target" = auth ] || [ "$target" = internode ]; then
  # A unity build (8 sources per translation unit): the sanitized tree
  # compiles in about a third of the time (15 min to about 5 on 2 cores),
  # which CI's budget needs; file-local names must not clash across files.
  cmake -S "$root" -B "$out-cmake" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -g" -DTESSERA_FUZZ=ON -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 >/dev/null
  cmake --build "$out-cmake" --target "${target}_fuzzer" -j2 >"$out/${target}_build.log" 2>&1 \
    || { tail -30 "$out/${target}_build.log" >&2; exit 1; }
  cp "$out-cmake/fuzz/${target}_fuzzer" "$out/${target}_fuzzer"
  if [ -z "$(ls -A "$out/${target}_corpus")" ]; then
    if [ "$target" = executor ]; then
      python3 "$root/fuzz/seed_executor_corpus.py" "$root" "$out/executor_corpus"
    elif [ "$target" = internode ]; then
      TESSERA_INTERNODE_SEEDS="$out/internode_corpus" "$out/internode_fuzzer" >/dev/null
    else
      python3 "$root/fuzz/seed_auth_corpus.py" "$root/fuzz/auth_seeds.txt" "$out/auth_corpus"
      cp "$root"/fuzz/regressions/auth/* "$out/auth_corpus/"
    fi
  fi
else
  clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Isrc -I. "fuzz/${target}_fuzzer.cc" "${sources[@]}" ${libs[@]+"${libs[@]}"} -o "$out/${target}_fuzzer"
fi
# Inputs that once failed stay in the corpus (fuzz/regressions/<target>/; the executor's and auth's
# seeding scripts above copy theirs).
if [ -d "$root/fuzz/regressions/$target" ] && [ "$target" != auth ] && [ "$target" != executor ]; then
  cp "$root/fuzz/regressions/$target"/* "$out/${target}_corpus/"
fi
# Seeds that show the fuzzer a door's shapes (v5 frames for frame_decoder).
if [ -d "$root/fuzz/seeds/$target" ]; then
  cp "$root/fuzz/seeds/$target"/* "$out/${target}_corpus/"
fi
log="$out/${target}.log"
status=0
"$out/${target}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/${target}_" "$out/${target}_corpus" >"$log" 2>&1 || status=$?
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==|SUMMARY|Done)" "$log" || true
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: $target failed (exit $status); log: $log" >&2
  grep -E "#[0-9]+ 0x" "$log" | head -20 >&2 || true
fi
exit "$status"
