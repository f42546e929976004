#!/usr/bin/env bash
# Resident memory per pending step on the server, and the restart of a server that holds
# them (issue 13: <= 1 KiB per pending step; 10,000 running executions back to their
# first dispatch in <= 1 s).
#
#   bench/pending_memory.sh [BIN] [BATCHES]     (default: build-release/baton, 10)
#   STEP_TIMEOUT=1h bench/pending_memory.sh ...  the step has that `timeout:` (a deadline
#                                                armed per waiting step)
#   HEARTBEAT_TIMEOUT=1h ...                     and/or that `heartbeat_timeout:` (another)
#   EXPECTED_DURATION=1h ...                     and/or that `expected_duration:` (a slow
#                                                watch, armed once the step runs)
#   RUNNING=1 ...                                the steps run instead of waiting: workers
#                                                (HTTP long-poll, 10,000 slots each) ack
#                                                every command and never answer it
#
# Starts `baton server` on a fresh SQLite file, registers a one-`command`-step workflow
# and connects no worker, so every step waits for one (RUNNING=1: is acked by one). Submits 1,000 executions to warm
# up, reads VmRSS, submits BATCHES x 1,000 more, waits 1 s and reads VmRSS again: the
# difference per execution is the figure. Then kill -9, restart, time the new process
# to "serving", and read its VmRSS then and 2 s later (what the allocator keeps of the
# recovery's freed memory). Prints one JSON line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$here/../build-release/baton}
BATCHES=${2:-10}
. "$here/server_lib.sh"
bench_server_init pending
t0=$(date +%s%N); bench_server_start --rate-limit 0; t1=$(date +%s%N)
total=$(((BATCHES + 1) * 1000))
worker_pid=""
if [ -n "${RUNNING:-}" ]; then
  # Acks every command and never answers: the steps stay running. Writes how many it acked.
  python3 - "$port" "$dir/creds.json" "$total" "$dir/acked" <<'PY' &
import json, os, sys, urllib.request
port, creds, total, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
token = json.load(open(creds))["token"]
def call(method, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"null")
workers = [f"ack-{i}" for i in range(total // 10000 + 1)]
for w in workers:
    call("POST", "/api/v1/workers/register",
         {"type": "register", "workerId": w, "capacity": 10000, "commands": ["bench.wait"]})
open(out + ".ready", "w").close()
acked = 0
while True:
    for w in workers:
        got = call("GET", f"/api/v1/workers/{w}/poll?wait=50")["messages"]
        acks = [{"type": "command.ack", "assignmentId": m["assignmentId"], "status": "accepted"}
                for m in got if m["type"] == "command"]
        if acks:
            call("POST", f"/api/v1/workers/{w}/batch", {"type": "batch", "messages": acks})
            acked += len(acks)
            with open(out + ".tmp", "w") as f:
                f.write(str(acked))
            os.replace(out + ".tmp", out)
PY
  worker_pid=$!
  trap 'kill "$worker_pid" 2>/dev/null; bench_server_stop; rm -rf "$dir"' EXIT
  for _ in $(seq 300); do [ -f "$dir/acked.ready" ] && break; sleep 0.01; done
fi
# Waits until the worker has acked $1 commands (RUNNING=1 only).
wait_acked() {
  [ -n "$worker_pid" ] || return 0
  for _ in $(seq 1200); do [ "$(cat "$dir/acked" 2>/dev/null || echo 0)" -ge "$1" ] && return 0; sleep 0.05; done
  echo "$(basename "$0"): the worker acked $(cat "$dir/acked" 2>/dev/null || echo 0) of $1" >&2; exit 1
}
python3 - "$port" "$dir/creds.json" "$BATCHES" "${STEP_TIMEOUT:-}" "${HEARTBEAT_TIMEOUT:-}" \
  "${EXPECTED_DURATION:-}" <<'PY' >"$dir/steps"
import json, sys, time, urllib.request
port, creds, batches = sys.argv[1], sys.argv[2], int(sys.argv[3])
timeout = f", timeout: {sys.argv[4]}" if sys.argv[4] else ""
timeout += f", heartbeat_timeout: {sys.argv[5]}" if sys.argv[5] else ""
timeout += f", expected_duration: {sys.argv[6]}" if sys.argv[6] else ""
token = json.load(open(creds))["token"]
def call(method, path, body, ctype="application/json"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
        data=body.encode(), headers={"Authorization": f"Bearer {token}", "Content-Type": ctype})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"null")
call("POST", "/api/v1/workflows",
     "name: pending\nsteps:\n  - {id: work, type: command, command: bench.wait"
     + timeout + ", with: {n: 1}}\n",
     "application/yaml")
def submit():
    body = json.dumps({"executions": [{"workflow": "pending", "input": {}} for _ in range(1000)]})
    call("POST", "/api/v1/executions/batch", body)
submit()
PY
wait_acked 1000
sleep 1
before=$(bench_rss)
python3 - "$port" "$dir/creds.json" "$BATCHES" <<'PY'
import json, sys, urllib.request
port, creds, batches = sys.argv[1], sys.argv[2], int(sys.argv[3])
token = json.load(open(creds))["token"]
for _ in range(batches):
    body = json.dumps({"executions": [{"workflow": "pending", "input": {}} for _ in range(1000)]})
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/executions/batch", method="POST",
        data=body.encode(), headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
PY
wait_acked "$total"
sleep 1
after=$(bench_rss)
if [ -n "$worker_pid" ]; then kill "$worker_pid"; wait "$worker_pid" 2>/dev/null || true; fi
bench_server_crash_restart --rate-limit 0
echo "{\"executions\": $((BATCHES * 1000)), \"steps\": \"$([ -n "${RUNNING:-}" ] && echo running || echo waiting)\", \"rss_before\": $before, \"rss_after\": $after," \
  "\"bytes_per_pending_step\": $(((after - before) / (BATCHES * 1000))), \"start_ms\": $(((t1 - t0) / 1000000))," \
  "\"restart_to_serving_ms\": $restart_ms, \"rss_after_restart\": $rss_restarted, \"rss_2s_after_restart\": $rss_settled}"
