#!/usr/bin/env bash
# Renders an HTML report in headless Chromium; see render_report.js.
# Installs the locked npm dependencies (puppeteer-core) on first use.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/puppeteer-core ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
exec node render_report.js "$@"
