#!/usr/bin/env bash
# Server throughput under wrk (64 connections): submissions/s with p50/p99 latency of
# POST /api/v1/executions (a one-step no-op workflow, SQLite FULL + group commit), then
# GET /api/v1/executions/{id}. Usage: bench/server_bench.sh [BATON_BINARY] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build-bench/baton}
secs=${2:-10}
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
"$bin" server --listen 127.0.0.1:0 --db "$dir/baton.db" --credentials "$dir/creds.json" \
  --io-threads 2 --rate-limit 0 >"$dir/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q 'serving' "$dir/server.log" 2>/dev/null && break; sleep 0.05; done
url=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["server"])' "$dir/creds.json")
token=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["token"])' "$dir/creds.json")
curl -sf -H "Authorization: Bearer $token" --data-binary \
  $'name: bench\nsteps:\n  - {id: only, type: noop}\n' "$url/api/v1/workflows" >/dev/null
cat >"$dir/submit.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"workflow": "bench", "input": {}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"
LUA
cat >"$dir/get.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $token"
LUA
echo "== submit: POST /api/v1/executions, 64 connections, ${secs}s"
wrk -t2 -c64 -d"${secs}s" --latency -s "$dir/submit.lua" "$url/api/v1/executions" |
  grep -E 'Requests/sec|Latency  | 50%| 99%|Non-2xx|Socket errors'
id=$(curl -sf -H "Authorization: Bearer $token" "$url/api/v1/executions?limit=1" |
  python3 -c 'import json,sys;print(json.load(sys.stdin)["executions"][0]["id"])')
echo "== get: GET /api/v1/executions/$id, 64 connections, ${secs}s"
wrk -t2 -c64 -d"${secs}s" --latency -s "$dir/get.lua" "$url/api/v1/executions/$id" |
  grep -E 'Requests/sec|Latency  | 50%| 99%|Non-2xx|Socket errors'
