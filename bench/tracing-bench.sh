#!/usr/bin/env bash
# Request tracing's cost, short and bounded: the real router (the jar, user-space mode, its default
# Wasm tiers) under the Java LoadGenerator's nano requests, once with telemetry off (the default) and
# once with every request traced (samplePercent 100) and exported over OTLP/HTTP to a local sink
# (OtlpSink, loopback). Prints one LoadGenerator line per setting and the sink's export count.
#
# Usage: bench/tracing-bench.sh [SECONDS] [WARMUP_SECONDS] [CONCURRENCY]
# Takes /tmp/nx-bench.lock for the whole run; every process started here is stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

seconds=${1:-10}
warmup=${2:-10}
concurrency=${3:-16}

source scripts/build-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.OtlpSink)

free_port() {
  while :; do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "$port"; return; fi
  done
}

wait_for() { # log-file pattern pid
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { echo "bench: process $3 died:" >&2; tail -20 "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "bench: '$2' not in $1" >&2
  return 1
}

pids=()
tmp=$(mktemp -d)
stop() { # pid...
  for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
cleanup() {
  stop "${pids[@]}"
  rm -rf "$tmp"
}
trap cleanup EXIT

sink_port=$(free_port)
java -cp "$cp" io.nexuscore.bench.OtlpSink "$sink_port" > "$tmp/sink.log" 2>&1 &
sink_pid=$!; pids+=($sink_pid)
wait_for "$tmp/sink.log" "otlp sink on" "$sink_pid"

echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start," \
  "c=$concurrency, ${seconds}s measured after ${warmup}s warm-up, user-space mode, nano on its Wasm tier"

for setting in off otlp; do
  data_port=$(free_port); control_port=$(free_port)
  enabled=false; [ "$setting" = otlp ] && enabled=true
  cat > "$tmp/$setting.json" <<JSON
{
  "dataPlane": {"host": "127.0.0.1", "port": $data_port},
  "control": {"port": $control_port, "stateFile": "$tmp/$setting-state.json"},
  "kernel": {"mode": "user"},
  "telemetry": {"serviceName": "nexuscore-bench",
                "otlp": {"enabled": $enabled, "endpoint": "http://127.0.0.1:$sink_port"}}
}
JSON
  java -jar "$jar" --config "$tmp/$setting.json" > "$tmp/$setting.log" 2>&1 &
  pid=$!; pids+=($pid)
  wait_for "$tmp/$setting.log" "data plane on" "$pid"
  java -cp "$cp" io.nexuscore.bench.LoadGenerator "tracing-$setting" "$data_port" /v1/chat/completions \
    "$concurrency" "$seconds" "$warmup" 1 "$pid" 2>/dev/null
  stop "$pid"
  if grep -qi "export.*fail\|failed to export" "$tmp/$setting.log"; then
    echo "bench: the $setting router reported export failures:" >&2
    grep -i "export" "$tmp/$setting.log" | head -5 >&2
  fi
done

stop "$sink_pid"
cat "$tmp/sink.log" | grep "otlp sink:"
