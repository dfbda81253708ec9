#!/usr/bin/env bash
# Chaos benchmark for upstream pools (io.nexuscore.bench.ChaosBench): steady load through a nano tier
# with two local OpenAI-compatible endpoints while one is killed, restarted, made to stall and
# released; prints requests lost and P50/P99 per phase, and the time to eject / re-admit.
# Everything runs in one JVM on 127.0.0.1 (free ports, user-space mode), nothing outlives it.
#   bench/chaos-bench.sh [--phase-ms 4000] [--concurrency 16] [--eject-after 3] [--eject-ms 1000] [--first-byte-ms 500]
# Take figures on a quiet machine: flock /tmp/nx-bench.lock bench/chaos-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

cp_="$(nx_test_classpath io.nexuscore.bench.ChaosBench)"
exec java -cp "$cp_" io.nexuscore.bench.ChaosBench "$@"
