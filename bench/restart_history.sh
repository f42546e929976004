#!/usr/bin/env bash
# The restart of a server whose running executions each have a history (issue 13: a
# server with 10,000 running executions restarts to its first dispatch in <= 1 s).
#
#   bench/restart_history.sh [BIN] [EXECUTIONS] [STEPS]   (default: build-release/baton,
#                                                          10000, 40)
#
# Starts `baton server` on a fresh SQLite file and registers a workflow of STEPS no-op
# steps in a chain, then a `command` step that no worker takes. Submits EXECUTIONS of it
# and waits until every no-op step has completed, so each execution is running with
# about 3 x STEPS events and STEPS finished steps behind it. Then kill -9 and times a
# new process to "serving" (the recovery of every execution happens before it serves),
# and reads its VmRSS then and 2 s later. Prints one JSON line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$here/../build-release/baton}
EXECUTIONS=${2:-10000}
STEPS=${3:-40}
. "$here/server_lib.sh"
bench_server_init restart
bench_server_start --rate-limit 0
python3 - "$port" "$dir/creds.json" "$EXECUTIONS" "$STEPS" <<'PY'
import json, sys, time, urllib.request
port, creds, n, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
token = json.load(open(creds))["token"]
def call(method, path, body=None, ctype="application/json"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else body.encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": ctype})
    with urllib.request.urlopen(req) as r:
        return r.read().decode()
chain = [{"id": f"s{i}", "type": "noop", **({"depends_on": [f"s{i - 1}"]} if i else {})}
         for i in range(steps)]
chain.append({"id": "work", "type": "command", "command": "bench.wait",
              **({"depends_on": [f"s{steps - 1}"]} if steps else {})})
call("POST", "/api/v1/workflows", json.dumps({"name": "history", "steps": chain}))
for left in range(n, 0, -1000):
    batch = [{"workflow": "history", "input": {}} for _ in range(min(1000, left))]
    call("POST", "/api/v1/executions/batch", json.dumps({"executions": batch}))
deadline = time.time() + 600
while True:
    done = 0
    for line in call("GET", "/metrics").splitlines():
        if line.startswith('baton_steps_total{event="completed"}'):
            done = float(line.split()[1])
    if done >= n * steps:
        break
    if time.time() > deadline:
        sys.exit(f"restart_history.sh: only {done:.0f} of {n * steps} no-op steps completed")
    time.sleep(0.2)
PY
sleep 1
before=$(bench_rss)
bench_server_crash_restart --rate-limit 0
# Counted beside the running server (a reader does not checkpoint the log it writes).
events=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COALESCE(SUM(span), 0) FROM events").fetchone()[0])' "$dir/baton.db")
echo "{\"executions\": $EXECUTIONS, \"steps_done_each\": $STEPS, \"events\": $events," \
  "\"rss_before_kill\": $before, \"restart_to_serving_ms\": $restart_ms," \
  "\"rss_after_restart\": $rss_restarted, \"rss_2s_after_restart\": $rss_settled}"
