#!/usr/bin/env bash
# Tier isolation benchmark: nano latency alone vs nano latency while large requests saturate the
# large tier, same run (io.nexuscore.bench.IsolationBench). Starts the router with ./start.sh when
# none answers (and stops it again afterwards), loopback only. Arguments go to IsolationBench:
#   bench/isolation-bench.sh [--nano 3000] [--concurrency 8] [--large-concurrency 8] [--simulate-ms 200]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

we_started=false
if ! curl -fsS --max-time 2 "$NX_CONTROL_URL/healthz" >/dev/null 2>&1; then
  ./start.sh
  we_started=true
fi
trap '$we_started && ./cleanup.sh >/dev/null' EXIT

cp_="$(nx_bench_classpath io.nexuscore.bench.IsolationBench)"
echo "router: $(curl -fsS "$NX_CONTROL_URL/healthz")"
java -cp "$cp_" io.nexuscore.bench.IsolationBench --url "$NX_DATA_URL" "$@"
