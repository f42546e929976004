#!/usr/bin/env bash
# Installs what bench/peers needs on a Debian 12 machine: redis-server and PostgreSQL
# (Debian packages, only when missing) and the pinned Node packages (npm ci).
# Node >= 20 and npm must already be on the PATH.
set -euo pipefail
cd "$(dirname "$0")"
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if ((${#need[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
# The Debian packages start system-wide services; the benchmark runs its own private
# instances and does not use (or stop) those.
command -v node >/dev/null || { echo "setup.sh: node (>= 20) is required" >&2; exit 1; }
node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' ||
  { echo "setup.sh: node >= 20 is required, found $(node --version)" >&2; exit 1; }
npm ci --no-audit --no-fund --loglevel=error  # exactly package-lock.json's versions
echo "setup.sh: redis $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), postgres $(ls -d /usr/lib/postgresql/*/ | sort -V | tail -1 | xargs basename), node $(node --version), ready"
