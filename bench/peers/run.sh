#!/usr/bin/env bash
# Baton's server against BullMQ (Redis) and graphile-worker (PostgreSQL) on this machine:
# the same shapes, alternating rounds, a median table with the ratios. See README.md.
#
#   bench/peers/run.sh [--rounds N] [--shapes flows,jobs,latency,worker-jobs,worker-latency]
#                      [--systems baton,baton-persistent,baton-pg,baton-pg-instance,baton-pg-2i,baton-pg-3i,bullmq-always,bullmq-everysec,graphile]
#                      [--quick] [--scale K (K times the work per measurement)]
#                      [--baton PATH] [--out FILE]
#
# BATON (or --baton) is the baton binary (default: build-release/baton of this checkout).
# Every measurement gets a fresh store: a new Baton server and database, a new Redis, a new
# PostgreSQL database (in one private cluster per run). Ports are picked in 27000-27999.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BATON=${BATON:-$here/../../build-release/baton}
rounds=3
shapes=flows,jobs,latency,worker-jobs,worker-latency
systems=baton,baton-pg,bullmq-always,bullmq-everysec,graphile
quick=0
scale=1
out=""
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --scale) scale=$2; shift 2 ;;
    --baton) BATON=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
if ((quick)); then
  rounds=1
  declare -A N=([flows]=100 [jobs]=2000 [latency]=200 [worker-jobs]=2000 [worker-latency]=200)
else
  declare -A N=([flows]=1000 [jobs]=20000 [latency]=1000 [worker-jobs]=20000 [worker-latency]=1000)
fi
for k in "${!N[@]}"; do N[$k]=$((N[$k] * scale)); done  # --scale K: K times the work per measurement
IFS=, read -r -a shape_list <<<"$shapes"
IFS=, read -r -a system_list <<<"$systems"
for s in "${shape_list[@]}"; do [[ -n "${N[$s]:-}" ]] || { echo "run.sh: unknown shape '$s'" >&2; exit 2; }; done
for s in "${system_list[@]}"; do
  case "$s" in baton|baton-persistent|baton-pg|baton-pg-instance|baton-pg-2i|baton-pg-3i|bullmq-always|bullmq-everysec|graphile) ;; *) echo "run.sh: unknown system '$s'" >&2; exit 2 ;; esac
done
[[ " ${system_list[*]} " == *" baton"* ]] && { [ -x "$BATON" ] || { echo "run.sh: no baton binary at $BATON (set BATON=...)" >&2; exit 2; }; }
[ -d "$here/node_modules/bullmq" ] || { echo "run.sh: run bench/peers/setup.sh first" >&2; exit 2; }

tmp=$(mktemp -d /tmp/baton-peers.XXXXXX)
chmod 755 "$tmp"
results=${out:-$tmp/results.jsonl}
: >"$results"
baton_pids=() redis_pid="" driver_pid="" pg_started=0
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_pg=()
[ "$(id -u)" -eq 0 ] && as_pg=(runuser -u postgres --)

cleanup() {
  set +e
  [ -n "$driver_pid" ] && kill "$driver_pid" 2>/dev/null && wait "$driver_pid" 2>/dev/null
  for p in "${baton_pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
  ((pg_started)) && "${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/pg/data" -m immediate -w stop >/dev/null 2>&1
  if [ -z "$out" ] && [ -s "$results" ]; then cp "$results" "$here/last-results.jsonl"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

freeport() { node "$here/lib.js" freeport; }
# Runs a driver in the background and waits for it, so that a signal to run.sh is
# handled at once (bash runs traps only between foreground commands); its line -> $line.
# Also sets $steal: the share of the machine's CPU time the hypervisor gave to someone
# else while the driver ran (steal in /proc/stat), in %. On a virtual machine a vCPU
# that is descheduled for a few milliseconds shows up in every latency tail.
drive() {
  local t0; t0=$(cpu_ticks)
  timeout 900 node "$@" >"$tmp/line" &
  driver_pid=$!
  local rc=0
  wait "$driver_pid" || rc=$?
  driver_pid=""
  line=$(cat "$tmp/line")
  steal=$(echo "$t0 $(cpu_ticks)" | awk '{t = $3 - $1; printf "%.1f", (t > 0 ? 100 * ($4 - $2) / t : 0)}')
  return $rc
}
load() { uptime | sed 's/.*load average: //'; }
# "total steal" CPU ticks since boot, all CPUs (/proc/stat: user..steal; guest time is in user).
cpu_ticks() { awk '/^cpu /{t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9}' /proc/stat; }

start_baton() {  # $1 key [$2 PostgreSQL URL [$3 instance name]]; sets baton_url, baton_token
  local dir=$tmp/baton-$1${3:+-$3} port store
  mkdir -p "$dir"
  port=$(freeport)
  store=(--db "$dir/baton.db")
  [ -n "${2:-}" ] && store=(--postgres "$2")
  [ -n "${3:-}" ] && store+=(--instance "$3")
  "$BATON" server --listen "127.0.0.1:$port" "${store[@]}" --credentials "$dir/creds.json" \
    --io-threads 2 --rate-limit 0 >"$dir/server.log" 2>&1 &
  baton_pids+=($!)
  for _ in $(seq 200); do grep -q serving "$dir/server.log" 2>/dev/null && break; sleep 0.05; done
  grep -q serving "$dir/server.log" || { cat "$dir/server.log" >&2; return 1; }
  baton_url=http://127.0.0.1:$port
  # Only the first server of a database creates the admin token and writes it here.
  [ -f "$dir/creds.json" ] && baton_token=$(node -p 'require(process.argv[1]).token' "$dir/creds.json")
  return 0
}
# $1 key, $2 PostgreSQL URL, $3 how many: instances bench-1..N; baton_url lists them all.
start_instances() {
  local urls=() i
  for ((i = 1; i <= $3; i++)); do
    start_baton "$1" "$2" "bench-$i" || return 1
    urls+=("$baton_url")
  done
  baton_url=$(IFS=,; echo "${urls[*]}")
}
# The Baton servers' peak resident memory (VmHWM), summed over instances, in MiB -> $rss.
peak_rss() {
  local kib=0 p v
  for p in "${baton_pids[@]}"; do
    v=$(awk '/^VmHWM:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
    kib=$((kib + ${v:-0}))
  done
  rss=$((kib / 1024))
}
stop_baton() {
  for p in "${baton_pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
  baton_pids=()
  rm -rf "$tmp/baton-$1"*
}

start_redis() {  # $1 key, $2 appendfsync; sets redis_port
  local dir=$tmp/redis-$1
  mkdir -p "$dir"
  redis_port=$(freeport)
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync "$2" \
    --save '' --maxmemory-policy noeviction --logfile "$dir/redis.log" --daemonize no &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
  cat "$dir/redis.log" >&2; return 1
}
stop_redis() { kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=""; rm -rf "$tmp/redis-$1"; }

start_pg() {  # one cluster for the run; fsync and synchronous_commit on (the defaults)
  [ -n "$pgbin" ] || { echo "run.sh: PostgreSQL is not installed (setup.sh)" >&2; return 1; }
  mkdir -p "$tmp/pg"
  [ ${#as_pg[@]} -gt 0 ] && chown postgres "$tmp/pg"
  pg_port=$(freeport)
  "${as_pg[@]}" "$pgbin/initdb" -D "$tmp/pg/data" -U postgres --auth=trust -E UTF8 >"$tmp/pg/initdb.log" 2>&1 ||
    { cat "$tmp/pg/initdb.log" >&2; return 1; }
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w \
    -o "-p $pg_port -k $tmp/pg -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on" start >/dev/null ||
    { cat "$tmp/pg/log" >&2; return 1; }
  pg_started=1
}
psql_() { psql -X -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }

# One measurement: system, shape, round. Prints a line and appends the result.
measure() {
  local system=$1 shape=$2 round=$3 key=$1-$2-$3 line="" n=${N[$2]} rc=0 rss="" steal=""
  local before; before=$(load)
  case "$system" in
    baton|baton-persistent)  # -persistent: the worker shapes through `baton worker --persistent`
      local through=()
      [ "$system" = baton-persistent ] && through=(--worker baton-persistent --baton "$BATON")
      start_baton "$key"
      drive "$here/baton.js" --shape "$shape" --n "$n" --url "$baton_url" --token "$baton_token" \
        "${through[@]}" || rc=$?
      peak_rss
      stop_baton "$key" ;;
    baton-pg|baton-pg-instance)  # on the run's PostgreSQL, a fresh database each time;
      # -instance: as one of several instances, every commit checking its leases
      local db=baton_${round}_${shape//-/_}
      psql_ -c "create database $db"
      start_baton "$key" "postgresql://postgres@127.0.0.1:$pg_port/$db" \
        "$([ "$system" = baton-pg-instance ] && echo bench-a)"
      drive "$here/baton.js" --shape "$shape" --n "$n" --url "$baton_url" --token "$baton_token" || rc=$?
      peak_rss
      stop_baton "$key"
      psql_ -c "drop database $db" ;;
    baton-pg-2i|baton-pg-3i)  # 2 or 3 instances of one database, submitted to in turn
      local db=baton_${round}_${shape//-/_}
      psql_ -c "create database $db"
      start_instances "$key" "postgresql://postgres@127.0.0.1:$pg_port/$db" "${system:9:1}"
      drive "$here/baton.js" --shape "$shape" --n "$n" --url "$baton_url" --token "$baton_token" || rc=$?
      peak_rss
      stop_baton "$key"
      psql_ -c "drop database $db" ;;
    bullmq-always|bullmq-everysec)
      start_redis "$key" "${system#bullmq-}"
      drive "$here/bullmq.js" --shape "$shape" --n "$n" --redis-port "$redis_port" --variant "${system#bullmq-}" || rc=$?
      stop_redis "$key" ;;
    graphile)
      local db=bench_${round}_${shape//-/_}
      psql_ -c "create database $db"
      drive "$here/graphile.js" --shape "$shape" --n "$n" --db "postgres://postgres@127.0.0.1:$pg_port/$db" || rc=$?
      psql_ -c "drop database $db" ;;
  esac
  if ((rc)) || [ -z "$line" ]; then
    printf 'round %s  %-15s %-16s FAILED (exit %s)\n' "$round" "$shape" "$system" "$rc"
    return 0
  fi
  line=$(node -e 'const r = JSON.parse(process.argv[1]); r.round = +process.argv[2]; r.load = process.argv[3];
    r.system = process.argv[4]; if (process.argv[5]) r.server_peak_rss_mib = +process.argv[5];
    if (process.argv[6]) r.steal_pct = +process.argv[6];
    console.log(JSON.stringify(r))' "$line" "$round" "$before" "$system" "$rss" "$steal")
  echo "$line" >>"$results"
  node -e 'const r = JSON.parse(process.argv[1]);
    const fig = r.value === null ? "n/a" : r.unit === "ms"
      ? `p50 ${r.p50_ms.toFixed(2)} ms  p99 ${r.p99_ms.toFixed(2)} ms`
      : `${Math.round(r.value).toLocaleString("en-US")} ${r.unit} (${r.seconds}s)`;
    const rss = r.server_peak_rss_mib === undefined ? "" : `  server peak ${r.server_peak_rss_mib} MiB`;
    const steal = r.steal_pct === undefined ? "" : `  steal ${r.steal_pct}%`;
    console.log(`round ${r.round}  ${r.shape.padEnd(15)} ${r.system.padEnd(16)} ${fig.padEnd(34)} n=${r.n}  load ${r.load}${steal}${rss}`)' "$line"
}

echo "baton: $BATON"
echo "redis: $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), postgres: $(basename "$(dirname "$pgbin")"), node $(node --version), bullmq $(node -p 'require("'"$here"'/node_modules/bullmq/package.json").version'), graphile-worker $(node -p 'require("'"$here"'/node_modules/graphile-worker/package.json").version')"
echo "rounds $rounds, shapes $shapes, systems $systems, $(nproc) cores, load $(load)"
[[ " ${system_list[*]} " =~ " "(graphile|baton-pg|baton-pg-instance|baton-pg-2i|baton-pg-3i)" " ]] && start_pg
for ((round = 1; round <= rounds; round++)); do
  order=("${system_list[@]}")
  if ((round % 2 == 0)); then  # alternate: B before A on even rounds
    order=()
    for ((i = ${#system_list[@]} - 1; i >= 0; i--)); do order+=("${system_list[$i]}"); done
  fi
  for shape in "${shape_list[@]}"; do
    for system in "${order[@]}"; do measure "$system" "$shape" "$round"; done
  done
done
echo
node "$here/report.js" "$results"
[ -n "$out" ] && echo "results: $out" || echo "results: $here/last-results.jsonl"
