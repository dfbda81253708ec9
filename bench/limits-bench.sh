#!/usr/bin/env bash
# Tenant limits' cost per request, short and bounded: the real router (the jar, user-space mode by
# default: MODE=kernel to run with the kernel programs, as root) under the Java LoadGenerator's nano
# request, with no limits (off) and with dataPlane.defaultLimits setting all four limits so high that
# none refuses (on: every request is charged, counted, settled and released, its usage recorded and
# its x-ratelimit-* headers written), alternated ROUNDS times in the same run (the order
# flipping every round). Prints one
# LoadGenerator line per run (req/s, P50/P99, errors, the router's CPU time per request), then the
# mean CPU µs per request of each setting and their ratio (on / off), then LimitsCost: the limits' own
# CPU per request in one JVM (the figure a loaded machine distorts least).
#   TIERS=upstream  (default) every tier forwarding to a bare local OpenAI server (BareServer): little
#                   work per request, so the limits' own share shows
#   TIERS=wasm      nano answered by its Chicory Wasm pool (the default configuration)
#
# Usage: [ROUNDS=4] [TIERS=upstream] bench/limits-bench.sh [SECONDS] [WARMUP_SECONDS] [CONCURRENCY]
# Takes /tmp/nx-bench.lock for the whole run (and /tmp/nx-lo.lock in kernel mode); every process
# started here is stopped by PID on exit. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

seconds=${1:-10}
warmup=${2:-5}
concurrency=${3:-16}
rounds=${ROUNDS:-4}
tiers_kind=${TIERS:-upstream}
mode=${MODE:-user}

source scripts/build-lib.sh
source bench/bench-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.LimitsCost)

wait_for() { # log-file pattern pid
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { echo "bench: process $3 died:" >&2; tail -20 "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "bench: '$2' not in $1" >&2
  return 1
}

if [ "$mode" = kernel ]; then
  bash scripts/mount-bpffs.sh > /dev/null
  exec 9> /tmp/nx-lo.lock
  flock 9
fi
pin_root=/sys/fs/bpf/nexuscore-limits-bench-$$
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
  "c=$concurrency, ${seconds}s measured after ${warmup}s warm-up, $mode mode, tiers: $tiers_kind, $rounds round(s)"

big=1000000000000
for round in $(seq 1 "$rounds"); do
# The order flips every round: the second router of a round may gain or lose by going second.
order="off on"; [ $((round % 2)) -eq 0 ] && order="on off"
for setting in $order; do
  data_port=$(free_port); control_port=$(free_port)
  limits=""
  if [ "$setting" = on ]; then
    limits=", \"defaultLimits\": {\"requestsPerMinute\": $big, \"tokensPerMinute\": $big, \"maxConcurrent\": $big, \"tokensPerDay\": $big}"
  fi
  cat > "$tmp/$setting.json" <<JSON
{
  "dataPlane": {"host": "127.0.0.1", "port": $data_port $limits},
  "control": {"port": $control_port, "stateFile": "$tmp/$setting-$round-state.json"},
  "kernel": {"mode": "$mode", "pinDir": "$pin_root-$setting-$round", "interfaces": ["lo"]}
  $tiers
}
JSON
  java -jar "$jar" --config "$tmp/$setting.json" > "$tmp/$setting.log" 2>&1 &
  pid=$!; pids+=($pid)
  wait_for "$tmp/$setting.log" "data plane on" "$pid"
  if [ "$setting" = on ]; then
    # Proof that the limits are on: the answer carries the headers.
    curl -s -o /dev/null -D - -H 'Content-Type: application/json' \
      -d '{"model":"m","messages":[{"role":"user","content":"hi"}]}' \
      "http://127.0.0.1:$data_port/v1/chat/completions" | grep -qi '^x-ratelimit-limit-requests' \
      || { echo "bench: the 'on' router sent no x-ratelimit headers" >&2; exit 1; }
  fi
  java -cp "$cp" io.nexuscore.bench.LoadGenerator "$setting#$round" "$data_port" /v1/chat/completions \
    "$concurrency" "$seconds" "$warmup" 1 "$pid$servers" 2>/dev/null | tee -a "$tmp/lines"
  stop "$pid"
  rm -rf "$pin_root-$setting-$round"
done
done

# cpu_us_per_req counts the router and the bare server: the same server work in both settings.
awk '{ split($1, n, "#"); for (i = 2; i <= NF; i++) if ($i ~ /^cpu_us_per_req=/) { split($i, v, "="); s[n[1]] += v[2]; c[n[1]]++ }
        if ($0 ~ /rps=/) for (i = 2; i <= NF; i++) if ($i ~ /^rps=/) { split($i, r, "="); rps[n[1]] += r[2] } }
     END { off = s["off"] / c["off"]; on = s["on"] / c["on"];
           printf "limits off: %.1f cpu_us/req, %.0f req/s (mean of %d)\n", off, rps["off"] / c["off"], c["off"];
           printf "limits on:  %.1f cpu_us/req, %.0f req/s (mean of %d)\n", on, rps["on"] / c["on"], c["on"];
           printf "ratio on/off: cpu %.3f, req/s %.3f\n", on / off, (rps["on"] / c["on"]) / (rps["off"] / c["off"]) }' "$tmp/lines"

# The limits' own CPU per request, apart from the request (LimitsCost: admit, headers, settle, usage,
# release in one thread, one JVM): CPU time, which a busy machine distorts less than req/s.
java -cp "$cp" io.nexuscore.bench.LimitsCost 1000000 3 2>/dev/null
