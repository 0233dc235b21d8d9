#!/usr/bin/env bash
# Renders a page in headless Chromium; see render_report.js.
# Installs the locked npm dependencies (puppeteer-core) from package-lock.json
# with `npm ci` on first use; a lock keeps concurrent tests from installing twice.
set -euo pipefail
cd "$(dirname "$0")"
(
  flock 9
  if [ ! -f node_modules/puppeteer-core/package.json ]; then
    npm ci --no-audit --no-fund --loglevel=error >&2
  fi
) 9>.npm-install.lock
exec node render_report.js "$@"
