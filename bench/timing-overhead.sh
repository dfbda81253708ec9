#!/usr/bin/env bash
# What the in-kernel run-time histograms cost (root): XDP and TC chain ns/packet with the
# nexus_timing.bpf.h switch off and on (BPF_PROG_TEST_RUN, alternated rounds, medians).
# Usage: bench/timing-overhead.sh [repeat] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/mount-bpffs.sh
mvn -B -q -ntp test-compile
exec mvn -B -q -ntp exec:java -Dexec.mainClass=io.nexuscore.bench.TimingOverheadBench -Dexec.classpathScope=test \
  -Dexec.args="${1:-200000} ${2:-7}"
