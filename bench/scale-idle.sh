#!/usr/bin/env bash
# Scale: many idle keep-alive connections to the router's data plane (issue 50). Loopback, bounded:
#   1. a bare Vert.x upstream (BareServer) and the router (the jar, every tier forwarding to it, MODE
#      kernel by default), warmed with wrk for WARM seconds;
#   2. IdleConnectionsBench: the router's RSS after a full GC, a normal request's latency alone, then
#      CONNECTIONS keep-alive connections opened (one request each) and held idle, the router's RSS
#      with them (raw and after a full GC), the normal request's latency meanwhile, and a second
#      request on every held connection (none may fail);
# and prints the figure: memory per idle connection = (RSS with them - RSS without, after a full GC
# each) / CONNECTIONS + the live heap they add (GC.class_histogram) / CONNECTIONS, and which classes
# hold that heap. Target (issue 50): <= 16 KB per idle connection, no failed or stalled request.
#
# Why both parts: by default the router runs here on a fixed heap whose pages are all resident from
# the start (HEAP=1g: -Xms1g -Xmx1g -XX:+AlwaysPreTouch, as a production router that must hold
# 10,000 connections would be sized), so the RSS difference is the connections' native memory and
# the histogram gives their heap. With HEAP= (empty) the JVM sizes its own heap: the RSS difference
# then holds the heap part too, but mostly whatever young generation G1 chose to touch while the
# connections opened (16-26 KB per connection in runs whose live heap per connection was 3.8 KB),
# a figure of GC ergonomics more than of connections (docs/scale.md).
#
# The router's header timeout (10 s) and idle timeout (120 s) would close idle connections during the
# run: this config sets both to 10 minutes, so the figure is what a connection costs while it lives.
# NMT=1 starts the router with -XX:NativeMemoryTracking=summary and prints which NMT categories grew
# (heap, "Other" = direct buffers, threads...); HISTOGRAM=1 prints the live heap per held connection
# by class (jcmd GC.class_histogram before and with them).
#
# Usage: bench/scale-idle.sh   CONNECTIONS=10000 PROBE_SECONDS=10 WARM=30 MODE=kernel|user HEAP=1g NMT=0 HISTOGRAM=1
#        JAVA_OPTS=<router JVM flags>  TRANSPORT=auto|io_uring|epoll
# Takes /tmp/nx-bench.lock (and /tmp/nx-lo.lock in kernel mode); every process started here is
# stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench >/dev/null   # wrk

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

connections=${CONNECTIONS:-10000}
probe_seconds=${PROBE_SECONDS:-10}
warm=${WARM:-30}
mode=${MODE:-kernel}
# Two fds per connection would be the client's and the router's in one process; each side is its own
# process here, but both inherit this limit.
ulimit -n $((connections + 4096)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"

source scripts/build-lib.sh
source bench/bench-lib.sh
source bench/scale-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.IdleConnectionsBench)

pids=()
tmp=$(mktemp -d)
trap scale_cleanup EXIT
scale_lo_lock "$mode"

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, $(scale_load_line) at start," \
  "$connections connections, mode $mode, heap $([ -n "${HEAP-1g}" ] && echo "${HEAP-1g} pre-touched" || echo "sized by the JVM"), fd limit $(ulimit -n)"

bare_port=$(free_port)
java -cp "$cp" io.nexuscore.bench.BareServer "$bare_port" "$(nproc)" > "$tmp/bare.log" 2>&1 &
pids+=($!); wait_port "$bare_port" "$!"

jvm_flags=(${JAVA_OPTS:-})
heap=${HEAP-1g}
[ -n "$heap" ] && jvm_flags+=(-Xms"$heap" -Xmx"$heap" -XX:+AlwaysPreTouch)
[ "${NMT:-0}" = 1 ] && jvm_flags+=(-XX:NativeMemoryTracking=summary)
scale_start_router router "$mode" '"headerTimeoutMs": 600000, "idleTimeoutMs": 600000' \
  "$(scale_upstream_tiers "$bare_port" 64)" "${jvm_flags[@]}"

short_chat_lua "$tmp/post.lua"
wrk -t1 -c64 -d"${warm}s" -s "$tmp/post.lua" "http://127.0.0.1:$router_port/v1/chat/completions" > /dev/null

java -Xss256k -cp "$cp" io.nexuscore.bench.IdleConnectionsBench --port "$router_port" --pid "$router_pid" \
  --connections "$connections" --probe-seconds "$probe_seconds" --nmt "$([ "${NMT:-0}" = 1 ] && echo true || echo false)" \
  --histogram "$([ "${HISTOGRAM:-1}" = 1 ] && echo true || echo false)"
scale_router_warnings
echo "# $(date -u +%FT%TZ), $(scale_load_line) at the end"
