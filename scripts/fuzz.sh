#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan, and runs each for
# $1 seconds (default 60). The corpus starts from the committed seeds and regression
# inputs (fuzz/corpus/<target>/) plus the workflows in tests/ and examples/. A crash,
# a leak or a timeout fails the run; its input is kept in build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
# Targets named in FUZZ_REPLAY_ONLY only replay their corpus (seeds and regression
# inputs) instead of mutating it, to check a fix against the regression inputs quickly.
replay_only=" ${FUZZ_REPLAY_ONLY:-} "
pkgs=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DBATON_FUZZ=ON -DBATON_SANITIZE=address -DBATON_WERROR=OFF >/dev/null
ninja -C build-fuzz fuzz_targets | tail -3

mkdir -p build-fuzz/artifacts
# Directories the targets make in /tmp after this point are checked at the end.
marker=$(mktemp)
trap 'rm -f "$marker"' EXIT
for target in fuzz_workflow fuzz_json fuzz_expr fuzz_worker_protocol fuzz_http fuzz_websocket; do
  corpus="build-fuzz/corpus/$target"
  mkdir -p "$corpus"
  seeds="fuzz/corpus/$target"
  if [ "$target" = fuzz_workflow ] || [ "$target" = fuzz_expr ]; then
    for f in tests/scenarios/*/workflow.yaml examples/*.yaml; do
      [ -f "$f" ] && cp "$f" "$corpus/$(echo "$f" | tr '/' '_')"
    done
  fi
  # The targets with the whole server in the process: its state grows by design from one
  # input to the next, so a per-input leak check finds only that (and, stopping the
  # world after nearly every input, stalls the server's threads); leaks at exit are
  # still reported.
  per_input_leaks=1
  case "$target" in fuzz_http | fuzz_websocket) per_input_leaks=0 ;; esac
  # fuzz_websocket waits up to 30 s for a handshake before it calls the server stuck.
  input_timeout=10
  [ "$target" = fuzz_websocket ] && input_timeout=60
  if [[ "$replay_only" == *" $target "* ]]; then
    echo "fuzz: $target replays its corpus only (FUZZ_REPLAY_ONLY)"
    ASAN_OPTIONS=detect_leaks=1 "./build-fuzz/fuzz/$target" -runs=0 -timeout="$input_timeout" \
      -detect_leaks="$per_input_leaks" \
      -rss_limit_mb=2048 "$corpus" "$seeds" >"build-fuzz/$target.log" 2>&1 || {
      tail -40 "build-fuzz/$target.log"
      echo "fuzz: $target FAILED on a corpus input" >&2
      exit 1
    }
    grep -E "INITED|DONE" "build-fuzz/$target.log" | sed "s/^/fuzz: $target /"
    continue
  fi
  echo "fuzz: $target for ${seconds}s"
  # -timeout: one input taking longer is a finding (a hang); -rss_limit_mb: so is
  # memory past 2 GiB (an alias bomb).
  if ! ASAN_OPTIONS=detect_leaks=1 "./build-fuzz/fuzz/$target" -max_total_time="$seconds" \
      -detect_leaks="$per_input_leaks" \
      -timeout="$input_timeout" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/artifacts/$target-" "$corpus" "$seeds" \
      >"build-fuzz/$target.log" 2>&1; then
    tail -40 "build-fuzz/$target.log"
    echo "fuzz: $target FAILED; the input is in build-fuzz/artifacts/" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec" "build-fuzz/$target.log" |
    sed "s/^/fuzz: $target /"
done
# The server harness removes its directory when a target exits normally: one left by a
# target that is no longer running is a leak into /tmp (each run used to leave two).
left=()
while IFS= read -r dir; do
  kill -0 "${dir##*-}" 2>/dev/null || left+=("$dir")
done < <(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'baton-fuzz-*' -newer "$marker" 2>/dev/null)
if [ ${#left[@]} -gt 0 ]; then
  echo "fuzz: FAILED: the targets left ${left[*]}" >&2
  exit 1
fi
echo "fuzz: every target ran ${seconds}s without a finding"
