#!/usr/bin/env bash
# Installs every build and test dependency of Tessera from Debian packages.
# Idempotent: packages already installed are skipped; uses sudo when not root.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git curl
  clang libclang-rt-14-dev
  librocksdb-dev rocksdb-tools
  liblz4-dev libsnappy-dev libasio-dev zlib1g-dev libsodium-dev libssl-dev openssl
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libcpp-httplib-dev libedit-dev
  python3-cassandra python3-pytest
  etcd-server golang-go golang-github-gocql-gocql-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libxxhash-dev libgmp-dev
  liblua5.4-dev libhnswlib-dev
  chromium
)

# `install-deps.sh --bench`: also the peers bench/compare measures against.
if [ "${1:-}" = "--bench" ]; then
  PACKAGES+=(postgresql-15 redis-server redis-tools linux-perf valgrind)
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm run the Node driver tests; use the machine's if it has one.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  for p in nodejs npm; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
