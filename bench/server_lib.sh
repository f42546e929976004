# Sourced by the bench scripts that start their own `baton server` on a fresh SQLite file:
#   bench_server_init NAME     a temporary directory ($dir), a free loopback port ($port),
#                              and an EXIT trap that stops the server and removes $dir
#   bench_server_start ARGS... starts "$BIN server" there with ARGS added ($pid), and
#                              waits (up to 3 s) for it to serve; exits 1 if it does not
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
bench_server_stop() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; fi
  pid=""
}
