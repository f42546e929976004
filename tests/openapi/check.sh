#!/usr/bin/env bash
# openapi.json of a real server passes Redocly's recommended rules (redocly.yaml), and a
# TypeScript client generated from it (openapi-typescript + openapi-fetch) compiles and
# works against that server. Usage: check.sh BATON_BINARY
# Installs the pinned npm packages (npm ci) on first use; the server runs on a free
# loopback port in a temporary directory and is stopped at the end.
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/baton-openapi.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2> /dev/null && wait "$server_pid" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "openapi check: $*" >&2; exit 1; }

cd "$here"
if [ ! -x node_modules/.bin/redocly ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error > "$work/npm.log" 2>&1 || fail "npm ci: $(cat "$work/npm.log")"
fi

"$bin" server --listen 127.0.0.1:0 --db "$work/baton.db" --credentials "$work/credentials.json" \
  > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do [ -s "$work/credentials.json" ] && break; sleep 0.05; done
[ -s "$work/credentials.json" ] || fail "the server did not start: $(cat "$work/server.log")"
read -r url token < <(node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1]));
  console.log(c.server, c.token)' "$work/credentials.json")

curl -sf "$url/api/v1/openapi.json" -o "$work/openapi.json" || fail "GET /api/v1/openapi.json"
# Clean: no error and no warning under the recommended rules (the totals of its JSON
# report; its text output also carries a banner about the Node.js version).
npx --no-install redocly lint --config redocly.yaml --format=json "$work/openapi.json" \
  > "$work/lint.json" 2> "$work/lint.log" || true
totals=$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
  console.log(`${r.totals.errors} ${r.totals.warnings}`)' "$work/lint.json" 2> /dev/null) \
  || fail "redocly lint gave no report: $(cat "$work/lint.log")"
[ "$totals" = "0 0" ] || fail "redocly lint: errors and warnings $totals: $(cat "$work/lint.json")"
# The client is built in the work directory (nothing written to the source tree), with
# this directory's packages.
cp client.ts tsconfig.json package.json "$work/"
ln -s "$here/node_modules" "$work/node_modules"
cd "$work"
mkdir -p out
npx --no-install openapi-typescript openapi.json -o out/schema.d.ts > gen.log 2>&1 \
  || fail "openapi-typescript: $(cat gen.log)"
npx --no-install tsc -p tsconfig.json > tsc.log 2>&1 || fail "tsc: $(cat tsc.log)"
node out/client.js "$url" "$token" openapi.json \
  || fail "the generated client failed (server log: $(tail -20 server.log))"
echo "openapi check: lint clean, generated client ok"
