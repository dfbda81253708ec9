#!/usr/bin/env bash
# Wasm tier benchmark: instantiate time per tier and engine, call overhead and a 4 KB request round
# trip per engine, with Chicory : wasmtime ratios. Not a test; figures depend on the machine.
# Usage: bench/wasm-bench.sh   (from anywhere; builds the guests and the load generators first)
set -euo pipefail
source "$(dirname "$0")/../scripts/build-lib.sh"
cp_="$(nx_bench_classpath io.nexuscore.bench.WasmBench)"
exec java -Xms512m -Xmx2g -cp "$cp_" \
  io.nexuscore.bench.WasmBench "$@"
