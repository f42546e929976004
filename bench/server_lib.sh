# Sourced by the bench scripts that start their own `baton server` on a fresh SQLite file:
#   bench_server_init NAME     a temporary directory ($dir), a free loopback port ($port),
#                              and an EXIT trap that stops the server and removes $dir
#   bench_server_start ARGS... starts "$BIN server" there with ARGS added ($pid), and
#                              waits (up to 3 s) for it to serve; exits 1 if it does not
#   bench_server_crash_restart ARGS...  kill -9, then bench_server_start ARGS... timed
#   bench_rss                  the server's VmRSS in bytes
bench_server_init() {
  dir=$(mktemp -d "/tmp/baton-$1.XXXXXX")
  pid=""
  trap 'bench_server_stop; rm -rf "$dir"' EXIT
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
}
bench_server_start() {
  "$BIN" server --listen "127.0.0.1:$port" --db "$dir/baton.db" --credentials "$dir/creds.json" \
    "$@" >"$dir/log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do grep -q "baton: serving" "$dir/log" 2>/dev/null && return; sleep 0.01; done
  echo "$(basename "$0"): the server did not start:" >&2; cat "$dir/log" >&2; exit 1
}
bench_rss() { awk '/VmRSS/ {print $2 * 1024}' "/proc/$pid/status"; }
# kill -9 the server and start it again with ARGS...: sets restart_ms (to "serving"),
# rss_restarted (VmRSS then) and rss_settled (2 s later: what the allocator kept).
bench_server_crash_restart() {
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  local r0 r1
  r0=$(date +%s%N)
  bench_server_start "$@"
  r1=$(date +%s%N)
  restart_ms=$(((r1 - r0) / 1000000))
  rss_restarted=$(bench_rss)
  sleep 2
  rss_settled=$(bench_rss)
}
bench_server_stop() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; fi
  pid=""
}
