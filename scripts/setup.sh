#!/usr/bin/env bash
# Installs the Debian packages Baton builds and tests with; only the missing ones.
# postgresql: its server programs, for the tests that start a private cluster (the
# package's own system service is not used).
# --browser: also Debian's chromium, for the dashboard's tests in a headless browser
# (tests/browser; `make test` and `make test-tsan` ask for it, `make demo` does not).
set -euo pipefail
browser=0
[ "${1:-}" = "--browser" ] && browser=1
pkgs=(build-essential cmake ninja-build ccache pkg-config
      nlohmann-json3-dev libyaml-dev libre2-dev libcli11-dev libsqlite3-dev sqlite3
      libgtest-dev libgmock-dev libbenchmark-dev python3 util-linux
      libboost1.81-dev libssl-dev libjemalloc-dev ca-certificates curl tzdata
      faketime libpq-dev postgresql help2man)
((browser)) && pkgs+=(chromium)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Node.js and npm for the tests that lint openapi.json and run a client generated from it
# (tests/openapi, pinned packages from the npm registry, Node >= 20): the machine's own
# when it has them, else Debian's.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs npm (Debian's)"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq nodejs npm >/dev/null
fi

# promtool (Debian's prometheus package) for the test that checks a live server's
# /metrics: only the one program is unpacked into .cache/tools/. Installing the package
# would start a Prometheus daemon, which the tests neither want nor stop.
tools="$(cd "$(dirname "$0")/.." && pwd)/.cache/tools"
if [ ! -x "$tools/promtool" ]; then
  echo "setup: fetching promtool (Debian package prometheus) into $tools"
  work=$(mktemp -d)
  (cd "$work" && apt-get download -qq prometheus 2>/dev/null \
     || { sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"; $sudo_cmd apt-get update -qq \
          && apt-get download -qq prometheus 2>/dev/null; })
  dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
  mkdir -p "$tools"
  cp "$work/x/usr/bin/promtool" "$tools/promtool"
  rm -rf "$work"
fi
