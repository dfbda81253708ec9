#!/usr/bin/env bash
# Request tracing's cost, short and bounded: the real router (the jar; kernel mode when root, as the
# product runs by default, else user-space mode; MODE=user|kernel chooses) under the
# Java LoadGenerator's nano request, with telemetry off (the default) and with every request traced
# (samplePercent 100) and exported over OTLP/HTTP to a local sink (OtlpSink, loopback), alternated
# ROUNDS times. Prints one LoadGenerator line per run (req/s, P50/P99, the router's CPU time per
# request), then TracingCost's CPU time per span (tracing alone, in one JVM), and the sink's count.
#   TIERS=wasm      nano answered by its Chicory Wasm pool (the default configuration)
#   TIERS=upstream  every tier forwarding to a bare local OpenAI server (BareServer): far less work
#                   per request, so tracing's own share shows
#
#   SAMPLE_PERCENT=100  telemetry.samplePercent of the traced router (0: spans made, none recorded)
#   ORDER="off otlp"    which router runs first in a round (the second one may gain or lose by it)
#
# Usage: [ROUNDS=1] [TIERS=wasm] [SAMPLE_PERCENT=100] bench/tracing-bench.sh [SECONDS] [WARMUP_SECONDS] [CONCURRENCY]
# Takes /tmp/nx-bench.lock for the whole run (and /tmp/nx-lo.lock in kernel mode: XDP/TC on lo, a pin
# directory per router, removed after it); every process started here is stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

seconds=${1:-10}
warmup=${2:-10}
concurrency=${3:-16}
rounds=${ROUNDS:-1}
sample=${SAMPLE_PERCENT:-100}
order=${ORDER:-off otlp}
tiers_kind=${TIERS:-wasm}

source scripts/build-lib.sh
source bench/bench-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.OtlpSink)


wait_for() { # log-file pattern pid
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { echo "bench: process $3 died:" >&2; tail -20 "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "bench: '$2' not in $1" >&2
  return 1
}

mode="${MODE:-$([ "$(id -u)" -eq 0 ] && echo kernel || echo user)}"
if [ "$mode" = kernel ]; then
  bash scripts/mount-bpffs.sh > /dev/null
  exec 9> /tmp/nx-lo.lock
  flock 9
fi
pin_root=/sys/fs/bpf/nexuscore-tracing-bench-$$
pids=()
tmp=$(mktemp -d)
stop() { # pid...
  for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
cleanup() {
  stop "${pids[@]}"
  rm -rf "$tmp" "$pin_root"-*
}
trap cleanup EXIT

sink_port=$(free_port)
java -cp "$cp" io.nexuscore.bench.OtlpSink "$sink_port" > "$tmp/sink.log" 2>&1 &
sink_pid=$!; pids+=($sink_pid)
wait_for "$tmp/sink.log" "otlp sink on" "$sink_pid"

tiers=""; servers=""
if [ "$tiers_kind" = upstream ]; then
  bare_port=$(free_port)
  java -cp "$cp" io.nexuscore.bench.BareServer "$bare_port" > "$tmp/bare.log" 2>&1 &
  bare_pid=$!; pids+=($bare_pid)
  wait_for "$tmp/bare.log" "bare server on" "$bare_pid"
  servers=",$bare_pid"
  for t in nano small large; do
    tiers+="${tiers:+, }\"$t\": {\"model\": \"nexus-$t\", \"instances\": 64, \"queueCapacity\": 4096,
      \"upstream\": {\"baseUrl\": \"http://127.0.0.1:$bare_port/v1\", \"model\": \"bare\", \"timeoutMs\": 10000}}"
  done
  tiers=", \"tiers\": { $tiers }"
elif [ "$tiers_kind" != wasm ]; then
  echo "bench: TIERS must be wasm or upstream, got $tiers_kind" >&2; exit 2
fi

echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start," \
  "c=$concurrency, ${seconds}s measured after ${warmup}s warm-up, $mode mode, tiers: $tiers_kind, $rounds round(s)," \
  "traced router samples ${sample}%"

for round in $(seq 1 "$rounds"); do
for setting in $order; do
  data_port=$(free_port); control_port=$(free_port)
  enabled=false; [ "$setting" = otlp ] && enabled=true
  cat > "$tmp/$setting.json" <<JSON
{
  "dataPlane": {"host": "127.0.0.1", "port": $data_port},
  "control": {"port": $control_port, "stateFile": "$tmp/$setting-state.json"},
  "kernel": {"mode": "$mode", "pinDir": "$pin_root-$setting-$round", "interfaces": ["lo"]},
  "telemetry": {"serviceName": "nexuscore-bench", "samplePercent": $sample,
                "otlp": {"enabled": $enabled, "endpoint": "http://127.0.0.1:$sink_port"}}
  $tiers
}
JSON
  java -jar "$jar" --config "$tmp/$setting.json" > "$tmp/$setting.log" 2>&1 &
  pid=$!; pids+=($pid)
  wait_for "$tmp/$setting.log" "data plane on" "$pid"
  java -cp "$cp" io.nexuscore.bench.LoadGenerator "$setting#$round" "$data_port" /v1/chat/completions \
    "$concurrency" "$seconds" "$warmup" 1 "$pid$servers" 2>/dev/null
  stop "$pid"
  rm -rf "$pin_root-$setting-$round"
  if grep -qi "export.*fail\|failed to export" "$tmp/$setting.log"; then
    echo "bench: the $setting router reported export failures:" >&2
    grep -i "export" "$tmp/$setting.log" | head -5 >&2
  fi
done
done

# Tracing's own CPU per span, apart from the request (TracingCost: the SDK, batch processor and OTLP
# exporter to the same sink, in one JVM): CPU time, which a busy machine distorts less than req/s.
java -cp "$cp" io.nexuscore.bench.TracingCost "$sink_port" 100000 3 2>/dev/null

stop "$sink_pid"
grep "otlp sink:" "$tmp/sink.log"
