#!/usr/bin/env bash
# Scale: many concurrent streamed answers through the router from an upstream that streams slowly
# (issue 50). Loopback, bounded:
#   1. MockOpenAi --stream-chunks CHUNKS --chunk-ms CHUNK_MS on two ports (a streamed request gets
#      CHUNKS content chunks, one every CHUNK_MS, then usage and [DONE]; a normal request its answer at
#      once) and the router (the jar, every tier forwarding to both, 1,024 connections per endpoint at
#      most, MODE kernel by default), warmed with wrk for WARM seconds;
#   2. StreamFanoutBench: the router's RSS after a full GC and a normal request's latency alone; then
#      STREAMS streamed requests at once, each read to its [DONE], while the normal request runs again
#      and the router's RSS is sampled;
# and prints the figures: the router's peak RSS above the baseline per stream, its CPU over the
# streams' window (per event relayed, share of one core), complete streams, the longest silence
# between two chunks a stream saw, and the normal request's latency alone and with the streams open.
# Target (issue 50): every stream complete, no failed or stalled (> 1 s) normal request.
#
# The streams start evenly over RAMP_MS (5 s) and each lasts CHUNKS x CHUNK_MS (20 s), so all are open
# at once from the end of the ramp.
# Usage: bench/scale-streams.sh   STREAMS=1000 CHUNKS=40 CHUNK_MS=500 RAMP_MS=5000 PROBE_SECONDS=5 WARM=20
#        MODE=kernel|user NMT=0 JAVA_OPTS=<router JVM flags> TRANSPORT=auto|io_uring|epoll
# Takes /tmp/nx-bench.lock (and /tmp/nx-lo.lock in kernel mode); every process started here is
# stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench >/dev/null   # wrk

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

streams=${STREAMS:-1000}
chunks=${CHUNKS:-40}
chunk_ms=${CHUNK_MS:-500}
ramp_ms=${RAMP_MS:-5000}
probe_seconds=${PROBE_SECONDS:-5}
warm=${WARM:-20}
mode=${MODE:-kernel}
ulimit -n $((4 * streams + 4096)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"

source scripts/build-lib.sh
source bench/bench-lib.sh
source bench/scale-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.StreamFanoutBench)

pids=()
tmp=$(mktemp -d)
trap scale_cleanup EXIT
scale_lo_lock "$mode"

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, $(scale_load_line) at start," \
  "$streams streams of $chunks chunks ${chunk_ms} ms apart, mode $mode"

# Two mock endpoints (one process): a tier's `instances` are connections per endpoint, shared out
# between the event loops (512 a loop at the config's top of 1,024), so with one endpoint the
# streams alone would fill a loop's share and every other request on that loop would wait for a
# connection: the pool's bound, not the router's stall. With two, a loop has room for 1,024.
mock_ports="$(free_port),$(free_port)"
java -cp "$cp" io.nexuscore.bench.MockOpenAi --stream-chunks "$chunks" --chunk-ms "$chunk_ms" ${mock_ports//,/ } > "$tmp/mock.log" 2>&1 &
mock_pid=$!; pids+=($mock_pid)
for port in ${mock_ports//,/ }; do wait_port "$port" "$mock_pid"; done

jvm_flags=(${JAVA_OPTS:-})
[ "${NMT:-0}" = 1 ] && jvm_flags+=(-XX:NativeMemoryTracking=summary)
connections=$((streams + 64 > 1024 ? 1024 : streams + 64))
scale_start_router router "$mode" '' "$(scale_upstream_tiers "$mock_ports" "$connections")" "${jvm_flags[@]}"

short_chat_lua "$tmp/post.lua"
wrk -t1 -c64 -d"${warm}s" -s "$tmp/post.lua" "http://127.0.0.1:$router_port/v1/chat/completions" > /dev/null

mock_cpu_before=$(cpu_ticks "$mock_pid")
java -cp "$cp" io.nexuscore.bench.StreamFanoutBench --port "$router_port" --pid "$router_pid" --streams "$streams" \
  --chunks "$chunks" --chunk-ms "$chunk_ms" --ramp-ms "$ramp_ms" --probe-seconds "$probe_seconds" \
  --nmt "$([ "${NMT:-0}" = 1 ] && echo true || echo false)"
echo "# upstream mock CPU over the run: $(awk -v t=$(( $(cpu_ticks "$mock_pid") - mock_cpu_before )) 'BEGIN { printf "%.2f s", t / 100 }')"
scale_router_warnings
echo "# $(date -u +%FT%TZ), $(scale_load_line) at the end"
