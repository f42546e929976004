#!/usr/bin/env bash
# Builds Release with benchmarks and prints the figures quoted in issue notes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
command -v ninja >/dev/null || apt-get install -y -qq ninja-build
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATON_BENCH=ON >/dev/null
ninja -C build-bench baton baton_bench_engine baton_bench_worker
# Shared machines drift: quote the median of repetitions, with its spread.
./build-bench/bench/baton_bench_engine --benchmark_counters_tabular=true \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
bash bench/shell_vs_ninja.sh build-bench/baton
# Remote workers: dispatch latency at 1,000/s, throughput through 2 workers, failover.
./build-bench/bench/baton_bench_worker --baton build-bench/baton
