#!/usr/bin/env bash
# The classifier's accuracy against its body window, offline (no router, no root): strict / banded /
# gross misroute of the Java twin (the kernel's algorithm, ParityTest) over the shared corpus and the
# unseen sets in bench/data, for each window the prompt scan may read. Pair with
# bench/kernel-bench.sh (ns per packet) for the cost side of the curve.
#   bench/sample-curve.sh [--windows 64,128,256,...] [--band-percent 20] [--limit N]
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$NX_ROOT"

corpus="${NEXUSCORE_CORPUS:-$NX_ROOT/../shared/corpus}"
corpora="gsm8k=$corpus/gsm8k-test.jsonl,mt-bench=$corpus/mt-bench-questions.jsonl"
for f in passages multiple-choice code languages scripts structured python; do
  corpora+=",unseen-$f=$NX_ROOT/bench/data/unseen-$f.jsonl"
done
exec java ${JAVA_OPTS:-} -cp "$(nx_bench_classpath io.nexuscore.bench.SampleCurve)" io.nexuscore.bench.SampleCurve --corpora "$corpora" "$@"
