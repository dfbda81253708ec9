#!/usr/bin/env bash
# Data-plane benchmark, loopback, bounded, every figure from the same run:
#   bare      a bare Vert.x server answering the fixed OpenAI answer: the ceiling on this machine,
#             and the OpenAI upstream every forwarding target sends to
#   nginx     Debian nginx-light proxying to `bare` over a keepalive upstream: what one proxy hop
#             costs here (the peer the router is held against)
#   vertx-proxy  a bare Vert.x proxy (server -> client per event loop -> `bare`, nothing else):
#             the floor of one proxy hop on the router's own stack
#   netty-proxy  a bare Netty proxy (server codec -> keep-alive client codec per event loop -> `bare`):
#             the floor one layer below Vert.x's HTTP server and client, where a data plane on
#             Netty's codecs would start
#   inline    the router's data plane in front of an in-process tier that answers at once
#   router    the real router (the jar) with every tier forwarding to `bare`, per mode
#   wasm      the real router on its default Wasm tiers: nano answered by the Chicory nano pool, per mode
#   bare-end, nginx-end  the two peers again after the routers: how far this VM's phase moved
#             during the run (the summary adds each target's share of nginx at the end)
# Modes: kernel (the product's default: XDP/TC on lo, verdicts from the kernel) and user.
# Load generators: wrk (C, Debian's) and the project's Java LoadGenerator; closed loop, keep-alive,
# c=64 then c=1, printing req/s, P50, P99 and the servers' CPU time per request (user+sys from
# /proc over the measured window; for forwarding targets the proxy plus its upstream).
#
# Usage: bench/dataplane-bench.sh [SECONDS] [WARMUP_SECONDS]
#   MODES="kernel user"  LOADGENS="wrk java"  INSTANCES=<nproc>  JFR_DIR=<dir: record the routers>
#   TRANSPORT=auto|io_uring|epoll  the I/O engine of the router and its Vert.x peers (dataPlane.transport)
#   JIT_SETTLE_MAX=<s, default 90>
# Before its first point every JVM target (bare, inline, router, wasm) runs under c=64 until its JIT
# settles: 5 s windows until one compiles fewer than 25 methods (jstat), at most JIT_SETTLE_MAX
# seconds. A fixed warm-up measured the router half-compiled: under saturation on 2 cores C2 gets
# little CPU and the router's far larger code path kept compiling for a minute and more, while
# the bare server settled in seconds (numbers in bench/dataplane-results.md).
# Takes /tmp/nx-bench.lock for the whole run and /tmp/nx-lo.lock while a kernel-mode router is
# attached to lo. Each kernel-mode router gets its own pin dir, removed afterwards; every process
# started here is stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench   # wrk and nginx-light, which ./test.sh does not need

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

seconds=${1:-10}
warmup=${2:-10}
instances=${INSTANCES:-$(nproc)}
modes=${MODES:-kernel user}
loadgens=${LOADGENS:-wrk java}
transport=${TRANSPORT:-auto}
[ -n "${JFR_DIR:-}" ] && mkdir -p "$JFR_DIR" && JFR_DIR=$(cd "$JFR_DIR" && pwd)

source scripts/build-lib.sh
source bench/bench-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.LoadGenerator)

pids=()
pin_dirs=()
tmp=$(mktemp -d)
stop() { # pid... : TERM, then wait until each is gone (a kernel-mode router detaches on the way out)
  for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
  for pid in "$@"; do
    wait "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}
cleanup() {
  stop "${pids[@]}"
  for dir in "${pin_dirs[@]}"; do rm -rf "$dir"; done
  rm -rf "$tmp"
}
trap cleanup EXIT

to_us() { # wrk latency ("812.00us", "1.23ms", "2.01s") -> integer microseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) f = 1; else if (v ~ /ms$/) f = 1000; else if (v ~ /s$/) f = 1000000; else f = 1;
                         printf "%d", n * f + 0.5 }'
}

short_chat_lua "$tmp/post.lua"

jit_settle_max=${JIT_SETTLE_MAX:-90}

compiled() { # pid -> methods the JVM compiled so far (jstat -compiler: Compiled column); nothing when not a JVM
  { jstat -compiler "$1" 2>/dev/null || true; } | awk 'NR == 2 { print $1 }'
}

settle_jit() { # name port pid : c=64 load in 5 s windows until the JVM's JIT settles
  local url="http://127.0.0.1:$2/v1/chat/completions" waited=0 before after
  before=$(compiled "$3")
  [ -n "$before" ] || return 0 # not a JVM (nginx)
  while [ "$waited" -lt "$jit_settle_max" ]; do
    wrk -t1 -c64 -d5s -s "$tmp/post.lua" "$url" > /dev/null
    waited=$((waited + 5))
    after=$(compiled "$3")
    [ $((after - before)) -lt 25 ] && break
    before=$after
  done
  echo "# $1: JIT settled after ${waited}s of c=64 warm-up ($((after - before)) methods compiled in the last 5 s, $after in all)"
}

run_wrk() { # name port c servers
  local name=$1 port=$2 c=$3 servers=$4 url="http://127.0.0.1:$2/v1/chat/completions"
  wrk -t1 -c"$c" -d"${warmup}s" -s "$tmp/post.lua" "$url" > /dev/null
  local before; before=$(cpu_ticks $servers)
  wrk -t1 -c"$c" -d"${seconds}s" --latency -s "$tmp/post.lua" "$url" > "$tmp/wrk.out"
  local after; after=$(cpu_ticks $servers)
  local requests rps p50 p99 errors
  requests=$(awk '/requests in/ { print $1 }' "$tmp/wrk.out")
  rps=$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$tmp/wrk.out")
  p50=$(to_us "$(awk '$1 == "50%" { print $2 }' "$tmp/wrk.out")")
  p99=$(to_us "$(awk '$1 == "99%" { print $2 }' "$tmp/wrk.out")")
  errors=$(awk '/Non-2xx/ { n += $NF } /Socket errors/ { gsub(",", ""); n += $4 + $6 + $8 + $10 } END { print n + 0 }' "$tmp/wrk.out")
  printf "%-13s %-4s c=%-3d requests=%-8d rps=%-9d p50_us=%-6d p99_us=%-6d errors=%-3d cpu_us_per_req=%.1f\n" \
    "$name" wrk "$c" "$requests" "$rps" "$p50" "$p99" "$errors" \
    "$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$requests" 'BEGIN { print n ? t * 1e6 / hz / n : 0 }')"
}

run_java() { # name port c servers
  local servers=${4// /,}
  java -cp "$cp" io.nexuscore.bench.LoadGenerator "$1" "$2" /v1/chat/completions "$3" "$seconds" "$warmup" 1 "$servers" \
    2>/dev/null | awk '{ printf "%-13s java %s\n", $1, substr($0, index($0, $2)) }'
}

measure() { # name port servers -> result lines, c=64 first (the JIT warms faster under load)
  settle_jit "$1" "$2" "${3%% *}"
  for c in 64 1; do
    for gen in $loadgens; do "run_$gen" "$1" "$2" "$c" "$3" | tee -a "$tmp/results"; done
  done
}

jfr_flags() { # name -> JVM flags recording a JFR profile of that router when JFR_DIR is set
  [ -n "${JFR_DIR:-}" ] && echo "-XX:StartFlightRecording=filename=$JFR_DIR/$1.jfr,settings=profile"
  return 0
}

router_config() { # name mode tiers-json -> config file
  local data_port control_port pin_dir
  data_port=$(free_port); control_port=$(free_port); pin_dir=/sys/fs/bpf/nexuscore-bench-$$-$1-$2
  cat > "$tmp/$1.json" <<JSON
{
  "dataPlane": {"host": "127.0.0.1", "port": $data_port, "instances": $instances, "transport": "$transport"},
  "control": {"port": $control_port, "stateFile": "$tmp/$1-$2-state.json"},
  "kernel": {"mode": "$2", "pinDir": "$pin_dir", "interfaces": ["lo"]}
  $3
}
JSON
  echo "$data_port $pin_dir"
}

bare_port=$(free_port); inline_port=$(free_port)
java -Dnexus.transport="$transport" -cp "$cp" io.nexuscore.bench.BareServer "$bare_port" "$instances" > "$tmp/bare.log" 2>&1 &
bare_pid=$!; pids+=($bare_pid)
java -Dnexus.transport="$transport" -cp "$cp" io.nexuscore.bench.InlineRouter "$inline_port" "$instances" > "$tmp/inline.log" 2>&1 &
inline_pid=$!; pids+=($inline_pid)
wait_port "$bare_port" "$bare_pid"; wait_port "$inline_port" "$inline_pid"
proxy_port=$(free_port)
java -Dnexus.transport="$transport" -cp "$cp" io.nexuscore.bench.VertxProxy "$proxy_port" "$bare_port" "$instances" > "$tmp/vertx-proxy.log" 2>&1 &
proxy_pid=$!; pids+=($proxy_pid)
wait_port "$proxy_port" "$proxy_pid"
netty_port=$(free_port)
java -Dnexus.transport="$transport" -cp "$cp" io.nexuscore.bench.NettyProxy "$netty_port" "$bare_port" "$instances" > "$tmp/netty-proxy.log" 2>&1 &
netty_pid=$!; pids+=($netty_pid)
wait_port "$netty_port" "$netty_pid"

nginx_port=$(free_port)
mkdir -p "$tmp/nginx"
nginx_proxy_conf "$tmp/nginx" "$nginx_port" "$bare_port" "$instances"
nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" -g 'daemon off;' &
nginx_pid=$!; pids+=($nginx_pid)
wait_port "$nginx_port" "$nginx_pid"
for _ in $(seq 1 50); do pgrep -P "$nginx_pid" > /dev/null && break; sleep 0.1; done # the master listens before it forks
nginx_workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ' || true)

echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start," \
  "${seconds}s measured after ${warmup}s warm-up per point, $instances server instances, modes: $modes, load generators: $loadgens"
echo "# $(head -1 "$tmp/bare.log"); $(head -1 "$tmp/vertx-proxy.log"); $(head -1 "$tmp/netty-proxy.log")"

measure bare "$bare_port" "$bare_pid"
measure nginx "$nginx_port" "$nginx_pid $nginx_workers$bare_pid"
measure vertx-proxy "$proxy_port" "$proxy_pid $bare_pid"
measure netty-proxy "$netty_port" "$netty_pid $bare_pid"
stop "$proxy_pid"; stop "$netty_pid" # their idle event loops stay out of the routers' runs
measure inline "$inline_port" "$inline_pid"

upstream_tiers() {
  local t out=""
  for t in nano small large; do
    out+="${out:+, }\"$t\": {\"model\": \"nexus-$t\", \"instances\": 64, \"queueCapacity\": 4096,
      \"upstream\": {\"baseUrl\": \"http://127.0.0.1:$bare_port/v1\", \"model\": \"bare\", \"timeoutMs\": 10000}}"
  done
  echo ", \"tiers\": { $out }"
}

for mode in $modes; do
  for target in router wasm; do
    tiers=""; servers=""
    if [ "$target" = router ]; then tiers=$(upstream_tiers); servers=" $bare_pid"; fi
    read -r port pin_dir < <(router_config "$target" "$mode" "$tiers")
    (
      if [ "$mode" = kernel ]; then exec 9> /tmp/nx-lo.lock; flock 9; fi
      # shellcheck disable=SC2046
      java $(jfr_flags "$target-$mode") -jar "$jar" --config "$tmp/$target.json" > "$tmp/$target-$mode.log" 2>&1 &
      pid=$!
      trap 'stop $pid; rm -rf "$pin_dir"' EXIT
      wait_port "$port" "$pid" || { tail -20 "$tmp/$target-$mode.log" >&2; exit 1; }
      for _ in $(seq 1 100); do grep -q "data plane on" "$tmp/$target-$mode.log" && break; sleep 0.1; done
      grep -q "$mode mode" "$tmp/$target-$mode.log" || { echo "bench: $target did not start in $mode mode:" >&2; cat "$tmp/$target-$mode.log" >&2; exit 1; }
      measure "$target-$mode" "$port" "$pid$servers"
    )
  done
done

# The peers again at the end: the routers' points come minutes after the peers', this VM's phase
# moves in minutes, and a ratio is only as good as the peer figure beside it. The summary prints how
# far the peers moved and each target's share of nginx at the end too.
measure bare-end "$bare_port" "$bare_pid"
measure nginx-end "$nginx_port" "$nginx_pid $nginx_workers$bare_pid"

awk '
  { split($3, c, "="); split($5, r, "="); split($6, p50, "="); k = $1 SUBSEP $2 SUBSEP c[2]; rps[k] = r[2]; p[k] = p50[2];
    names[$1] = 1; gens[$2] = 1 }
  END {
    printf "\nsummary (ratios within this run; added P50 = target P50 - bare P50)\n";
    for (g in gens) for (i = 1; i <= 2; i++) {
      cc = (i == 1) ? 64 : 1; b = "bare" SUBSEP g SUBSEP cc; n = "nginx" SUBSEP g SUBSEP cc;
      be = "bare-end" SUBSEP g SUBSEP cc; ne = "nginx-end" SUBSEP g SUBSEP cc;
      printf "%s c=%-2d  nginx: %5.0f%% of bare, added P50 %+d us\n", g, cc, 100 * rps[n] / rps[b], p[n] - p[b];
      if ((be in rps) && (ne in rps) && rps[b] && rps[n])
        printf "%s c=%-2d  peers at the end: bare %3.0f%% of its first rate, nginx %3.0f%% (added P50 %+d us); a figure far from 100%% means the VM changed phase during the run\n",
          g, cc, 100 * rps[be] / rps[b], 100 * rps[ne] / rps[n], p[ne] - p[be];
      for (name in names) {
        if (name ~ /^(bare|nginx)(-end)?$/) continue;
        k = name SUBSEP g SUBSEP cc;
        if (!(k in rps)) continue;
        printf "%s c=%-2d  %-13s %5.0f%% of bare, %5.0f%% of nginx, added P50 %+d us (nginx %+d us)", g, cc, name,
          100 * rps[k] / rps[b], 100 * rps[k] / rps[n], p[k] - p[b], p[n] - p[b];
        if ((ne in rps) && rps[ne]) printf "; %3.0f%% of nginx at the end", 100 * rps[k] / rps[ne];
        printf "\n";
      }
    }
  }' "$tmp/results"
