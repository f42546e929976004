#!/usr/bin/env bash
# Submit -> completed latency of one no-op step, seen by a lean client: the server's own
# share of what bench/peers' `latency` shape measures from Node (whose client adds its
# event loop, its garbage collector and the live feed it listens on).
#
#   bench/submit_latency.sh [BIN] [SAMPLES]     (default: build-release/baton, 5000)
#
# Starts `baton server` on a fresh SQLite file (synchronous=FULL, as in bench/peers),
# registers a one-step no-op workflow, then POSTs one execution at a time on one
# keep-alive connection (Python's http.client) and times each until its answer, which
# says "completed" (a no-op step completes in the turn that starts its execution, and the
# answer is sent once that turn is durable). 20 warm-up samples are dropped. Prints one
# JSON line with p50/p90/p99/p99.9/max in milliseconds and the load average at the start.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$here/../build-release/baton}
SAMPLES=${2:-5000}
. "$here/server_lib.sh"
bench_server_init latency
bench_server_start --io-threads 2 --rate-limit 0
load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$port" "$dir/creds.json" "$SAMPLES" "$load" <<'PY'
import http.client, json, sys, time
port, creds, n, load = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
token = json.load(open(creds))["token"]
c = http.client.HTTPConnection("127.0.0.1", port)
h = {"Authorization": "Bearer " + token, "Content-Type": "application/yaml"}
c.request("POST", "/api/v1/workflows", "name: bench-noop\nsteps:\n  - {id: only, type: noop}\n", h)
r = c.getresponse(); r.read()
if r.status // 100 != 2: sys.exit(f"submit_latency.sh: POST /api/v1/workflows: HTTP {r.status}")
h["Content-Type"] = "application/json"
body = json.dumps({"workflow": "bench-noop", "input": {}})
ts = []
for i in range(n + 20):
    t = time.perf_counter()
    c.request("POST", "/api/v1/executions", body, h)
    r = c.getresponse(); d = r.read()
    ts.append(time.perf_counter() - t)
    if r.status // 100 != 2 or json.loads(d).get("status") != "completed":
        sys.exit(f"submit_latency.sh: sample {i}: HTTP {r.status} {d[:200]!r}")
ts = sorted(ts[20:])
q = lambda p: round(ts[min(len(ts) - 1, int(len(ts) * p))] * 1e3, 3)
print(json.dumps({"samples": n, "p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99),
                  "p999_ms": q(0.999), "max_ms": round(ts[-1] * 1e3, 3), "load": load}))
PY
