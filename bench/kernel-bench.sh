#!/usr/bin/env bash
# Kernel data path benchmark (root): XDP and TC chain ns/packet (BPF_PROG_TEST_RUN, repeat 1e6),
# the same under real veth traffic (kernel.bpf_stats_enabled), and a verdict lookup from Java.
# Usage: bench/kernel-bench.sh [repeat] [real-traffic requests] [table]  (table: the test_run table only)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/mount-bpffs.sh
mvn -B -q -ntp test-compile
exec mvn -B -q -ntp exec:java -Dexec.mainClass=io.nexuscore.bench.KernelBench -Dexec.classpathScope=test \
  -Dexec.args="${1:-1000000} ${2:-20000} ${3:-all}"
