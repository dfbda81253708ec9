#!/usr/bin/env bash
# Stress run against a running router (./start.sh first): 2500 nano + 500 small + 100 large requests
# shuffled and sent concurrently (64 in flight) over loopback; prints per tier P50/P95/P99/max,
# errors, misclassifications and the misroute rate. Arguments go to io.nexuscore.bench.StressLoad:
#   ./stress.sh [--nano 2500] [--small 500] [--large 100] [--concurrency 64] [--deadline-s 300] [--simulate-ms 0]
# The load generator is Java (src/bench/java, HdrHistogram); it is compiled when missing.
# NEXUSCORE_CLASSPATH names a ready classpath instead (the test suite passes its own).
set -euo pipefail
source "$(dirname "$0")/scripts/lib.sh"
cd "$NX_ROOT"

cp_="${NEXUSCORE_CLASSPATH:-}"
if [ -z "$cp_" ]; then
  cp_="$(nx_bench_classpath io.nexuscore.bench.StressLoad)"
fi
exec java -cp "$cp_" io.nexuscore.bench.StressLoad --url "$NX_DATA_URL" "$@"
