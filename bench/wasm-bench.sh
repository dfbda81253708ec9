#!/usr/bin/env bash
# Wasm tier benchmark: instantiate time per tier and engine, call overhead and a 4 KB request round
# trip per engine, with Chicory : wasmtime ratios. Not a test; figures depend on the machine.
# Usage: bench/wasm-bench.sh   (from anywhere; builds the guests and test classes first)
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -ntp -DskipTests test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.classpath
exec java -Xms512m -Xmx2g -cp "target/classes:target/test-classes:$(cat target/bench.classpath)" \
  io.nexuscore.bench.WasmBench "$@"
