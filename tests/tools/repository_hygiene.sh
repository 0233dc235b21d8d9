#!/usr/bin/env bash
# The repository holds no third-party tree and no stray data files: npm
# packages come from committed lockfiles through `npm ci`, and the datasets
# live only under demo/datasets (with their PROVENANCE). Exit 77 (skipped)
# outside a git checkout.
set -euo pipefail
root="$1"
files="$(git -C "$root" ls-files 2>/dev/null)" || { echo "not a git checkout: skipped"; exit 77; }
status=0
if grep -E '(^|/)node_modules/' <<<"$files" | head -5 | grep .; then
  echo "FAIL: tracked files under node_modules (install them from the lockfile with npm ci)"
  status=1
fi
if grep -E '\.(tsv|csv|csv\.gz|jsonl|rejects)$' <<<"$files" | grep -vE '^(demo/datasets|tests/data)/' | grep .; then
  echo "FAIL: data files outside demo/datasets and tests/data"
  status=1
fi
if grep -E '(^|/)__pycache__/|\.pyc$' <<<"$files" | grep .; then
  echo "FAIL: compiled Python files are tracked (.gitignore keeps them out)"
  status=1
fi
for lock in tests/report/package-lock.json tests/drivers/node/package-lock.json; do
  grep -qx "$lock" <<<"$files" || { echo "FAIL: $lock is not committed"; status=1; }
done
[ "$status" -eq 0 ] && echo "ok: $(wc -l <<<"$files") tracked files, no node_modules, no .pyc, data only under demo/datasets and tests/data"
exit "$status"
