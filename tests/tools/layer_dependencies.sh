#!/usr/bin/env bash
# Layers point one way (ARCHITECTURE.md, "Layers"): each lower layer's files
# include only their own layer and the layers below it, and the replica-local
# store (src/db) never reaches for a replica of another node: it names no
# ReplicaResolver, which only the Coordinator above it holds (issue 28).
set -euo pipefail
root="$1"
status=0
check() {  # folder, then the include prefixes it may use
  local folder="$1"
  shift
  local allowed
  allowed="$(printf '%s|' "$@")"
  allowed="${allowed%|}"
  local bad
  bad="$(grep -rnoE '#include "[a-z_]+(/[a-z_]+)?/' "$root/src/$folder" |
         grep -vE "#include \"($allowed)/" || true)"
  if [ -n "$bad" ]; then
    echo "FAIL: src/$folder includes a layer above it or beside it:"
    echo "$bad" | sed "s|$root/||" | head -10
    status=1
  fi
}
check common common
check types common types
check keys common types keys
check storage common types keys storage
check tracing common tracing
check tablets common types keys storage tracing tablets
check db common types keys storage tracing tablets db
check coordinator common types keys storage tracing tablets db coordinator
check auth common auth
check cql/protocol common types cql/protocol
check cql/parser common cql/parser
if grep -rnw 'ReplicaResolver' "$root/src/db" | grep .; then
  echo "FAIL: src/db names ReplicaResolver: the store chooses no replica of another node"
  status=1
fi
[ "$status" -eq 0 ] && echo "ok: common < types < keys < storage < tablets < db < coordinator; db holds no ReplicaResolver"
exit "$status"
