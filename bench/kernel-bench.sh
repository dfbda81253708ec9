#!/usr/bin/env bash
# Kernel data path benchmark (root): XDP and TC chain ns/packet (BPF_PROG_TEST_RUN, repeat 1e6),
# the same under real veth traffic (kernel.bpf_stats_enabled) beside two programs that do nothing
# (bench/bpf/nexus_empty.bpf.c: the floor any program pays there), and a verdict lookup from Java.
# Usage: bench/kernel-bench.sh [repeat] [real-traffic requests] [table|traffic]
#   (table: the test_run table only; traffic: the real-traffic phase only)
#        bench/kernel-bench.sh REPEAT 0 ab A.o B.o [ROUNDS]
#   (ab: the test_run table's XDP rows for two classifier objects, swapped round after round in one
#   data path; the lowest of ROUNDS rounds per row and object)
#        bench/kernel-bench.sh 0 0 frames DIR
#   (frames: the table's packets written to DIR, one file each, for bpftool prog run ... data_in FILE)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/mount-bpffs.sh
mvn -B -q -ntp test-compile
mkdir -p target/bench-bpf
clang -O2 -g -target bpf -Wall -Werror -Itarget/bpf-include -c bench/bpf/nexus_empty.bpf.c -o target/bench-bpf/nexus_empty.bpf.o
exec mvn -B -q -ntp exec:java -Dexec.mainClass=io.nexuscore.bench.KernelBench -Dexec.classpathScope=test \
  -Dexec.args="${1:-1000000} ${2:-20000} ${3:-all}${4:+ $4}${5:+ $5}${6:+ $6}"
