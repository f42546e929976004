#!/usr/bin/env bash
# 5,000 independent `true` shell steps at parallelism 2, against ninja -j2 running the
# same 5,000 commands, measured in one run. Prints both wall times and the ratio
# (DESIGN.md §9 target <= 1.1; issue #2 done at <= 1.5).
set -euo pipefail
BATON=${1:-build-bench/baton}
N=${N:-5000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

{
  echo "name: shell-bench"
  echo "steps:"
  for i in $(seq 1 "$N"); do echo "  - {id: t$i, type: shell, run: [\"true\"]}"; done
} > "$dir/wf.yaml"
{
  echo "rule run"
  echo "  command = true"
  for i in $(seq 1 "$N"); do echo "build out$i: run"; done
} > "$dir/build.ninja"

now() { date +%s.%N; }
t0=$(now); (cd "$dir" && ninja -j2 >/dev/null); t1=$(now)
"$BATON" run "$dir/wf.yaml" --ephemeral -p 2 -q; t2=$(now)
python3 - "$t0" "$t1" "$t2" "$N" <<'PY'
import sys
t0, t1, t2, n = map(float, sys.argv[1:5])
ninja, baton = t1 - t0, t2 - t1
print(f"shell steps: {int(n)} x true, parallelism 2")
print(f"  ninja -j2:   {ninja:.3f} s ({ninja / n * 1e6:.0f} us/command)")
print(f"  baton -p 2:  {baton:.3f} s ({baton / n * 1e6:.0f} us/step)")
print(f"  ratio baton/ninja: {baton / ninja:.2f}")
PY
