#!/usr/bin/env bash
# The dashboard's browser test (dashboard_test.js). Usage: run.sh BATON_BINARY SCREENSHOT_DIR
# Installs the pinned playwright-core (npm ci) on first use; Chromium is Debian's
# (scripts/setup.sh --browser).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log=$(mktemp)
  npm ci --no-audit --no-fund --loglevel=error > "$log" 2>&1 || { echo "npm ci: $(cat "$log")" >&2; rm -f "$log"; exit 1; }
  rm -f "$log"
fi
exec node dashboard_test.js "$1" "$2"
