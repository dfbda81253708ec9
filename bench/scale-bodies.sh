#!/usr/bin/env bash
# Scale: request bodies of 1 KB, 64 KB and 1 MB through router -> upstream against the bare Vert.x
# proxy -> the same upstream (issue 50), in interleaved rounds so both see the same machine:
#   bare         BareServer, the upstream (reads the body, answers the fixed chat answer)
#   vertx-proxy  VertxProxy -> bare: the stack's floor for one hop (reads the whole body, forwards it)
#   router       the jar (MODE kernel by default), every tier forwarding to bare, maxBodyBytes 4 MiB
# Every round measures, per body size, both targets once with wrk (CONNS connections, SECONDS each),
# the order alternating each round. Prints each point (req/s, MB/s of request body, P50, the proxy's
# own CPU per request and per KiB of body), then per size the medians and the router's share of the
# proxy's rate and its CPU per KiB against the proxy's (ratios within a round, median over rounds).
# The body is a chat request whose one user message is filled with words to the exact size.
#
# Usage: bench/scale-bodies.sh [ROUNDS=3] [SECONDS=6]   SIZES="1024 65536 1048576" CONNS=16 WARM=30
#        MODE=kernel|user JAVA_OPTS=<router JVM flags> TRANSPORT=auto|io_uring|epoll
# Takes /tmp/nx-bench.lock (and /tmp/nx-lo.lock in kernel mode); every process started here is
# stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench >/dev/null   # wrk

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

rounds=${1:-3}
seconds=${2:-6}
sizes=${SIZES:-1024 65536 1048576}
conns=${CONNS:-16}
warm=${WARM:-30}
mode=${MODE:-kernel}
instances=$(nproc)

source scripts/build-lib.sh
source bench/bench-lib.sh
source bench/scale-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.VertxProxy)

pids=()
tmp=$(mktemp -d)
trap scale_cleanup EXIT
scale_lo_lock "$mode"

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, $(scale_load_line) at start," \
  "$rounds rounds of ${seconds}s per target and size at c=$conns, sizes: $sizes, mode $mode"

bare_port=$(free_port)
java -Dnexus.transport="${TRANSPORT:-auto}" -cp "$cp" io.nexuscore.bench.BareServer "$bare_port" "$instances" > "$tmp/bare.log" 2>&1 &
bare_pid=$!; pids+=($bare_pid); wait_port "$bare_port" "$bare_pid"
proxy_port=$(free_port)
java -Dnexus.transport="${TRANSPORT:-auto}" -cp "$cp" io.nexuscore.bench.VertxProxy "$proxy_port" "$bare_port" "$instances" \
  > "$tmp/vertx-proxy.log" 2>&1 &
proxy_pid=$!; pids+=($proxy_pid); wait_port "$proxy_port" "$proxy_pid"
jvm_flags=(${JAVA_OPTS:-})
scale_start_router router "$mode" '"maxBodyBytes": 4194304' "$(scale_upstream_tiers "$bare_port" 64)" "${jvm_flags[@]}"

declare -A port pid_of
port[router]=$router_port; pid_of[router]=$router_pid
port[vertx-proxy]=$proxy_port; pid_of[vertx-proxy]=$proxy_pid

for size in $sizes; do # a chat request of exactly $size bytes: the user message filled with words
  cat > "$tmp/body-$size.lua" <<LUA
local head = '{"model":"bench","messages":[{"role":"user","content":"'
local tail = '"}]}'
local fill = $size - #head - #tail
local words = string.rep("the quick brown fox jumps over the lazy dog ", math.floor(fill / 44) + 1)
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = head .. string.sub(words, 1, fill) .. tail
LUA
done

url() { echo "http://127.0.0.1:${port[$1]}/v1/chat/completions"; }

for size in $sizes; do # JIT warm-up of both targets on every size, c=conns
  for name in vertx-proxy router; do
    wrk -t1 -c"$conns" -d"${warm}s" -s "$tmp/body-$size.lua" "$(url "$name")" > /dev/null
  done
done

targets=(vertx-proxy router)
for round in $(seq 1 "$rounds"); do
  for size in $sizes; do
    for i in 0 1; do
      name=${targets[$(((i + round) % 2))]}
      before=$(cpu_ticks "${pid_of[$name]}")
      wrk -t1 -c"$conns" -d"${seconds}s" --latency -s "$tmp/body-$size.lua" "$(url "$name")" > "$tmp/wrk.out"
      after=$(cpu_ticks "${pid_of[$name]}")
      awk -v name="$name" -v round="$round" -v size="$size" -v hz="$(getconf CLK_TCK)" -v t=$((after - before)) '
        /requests in/ { n = $1 } /^Requests\/sec/ { rps = $2 }
        $1 == "50%" { p50 = $2 + 0; if ($2 ~ /ms$/) p50 *= 1000; else if ($2 !~ /us$/) p50 *= 1000000 }
        /Non-2xx|Socket errors/ { errors = errors " " $0 }
        END { cpu = n ? t * 1e6 / hz / n : 0;
              printf "round %d size=%-8d %-12s rps=%-8.0f body_MBps=%-7.1f p50_us=%-7.0f cpu_us_per_req=%-8.1f cpu_ns_per_kib=%.0f%s\n",
                round, size, name, rps, rps * size / 1e6, p50, cpu, cpu * 1000 * 1024 / size, errors ? " ERRORS:" errors : "" }' \
        "$tmp/wrk.out" | tee -a "$tmp/results"
    done
  done
done

awk '
  { split($3, s, "="); split($5, r, "="); split($8, c, "="); k = s[2] SUBSEP $2; rps[k, $4] = r[2]; cpu[k, $4] = c[2];
    sizes[s[2]] = 1; if ($2 > rounds) rounds = $2 }
  END {
    printf "\nsummary (c='"$conns"', %d rounds; router against vertx-proxy within the same round, median over rounds)\n", rounds;
    for (size in sizes) {
      for (i = 1; i <= rounds; i++) {
        k = size SUBSEP i;
        share[i] = rps[k, "vertx-proxy"] ? rps[k, "router"] / rps[k, "vertx-proxy"] : 0;
        cpuRatio[i] = cpu[k, "vertx-proxy"] ? cpu[k, "router"] / cpu[k, "vertx-proxy"] : 0;
        routerCpu[i] = cpu[k, "router"]; proxyCpu[i] = cpu[k, "vertx-proxy"];
        routerRps[i] = rps[k, "router"]; proxyRps[i] = rps[k, "vertx-proxy"];
      }
      rc = median(routerCpu, rounds); pc = median(proxyCpu, rounds);
      printf "size=%-8d router %6.0f req/s (%.1f MB/s), vertx-proxy %6.0f req/s: router at %3.0f%% of the proxy'"'"'s rate;" \
             " own CPU per request router %.1f us, proxy %.1f us (%.2fx; per KiB %.0f ns against %.0f ns)\n",
        size, median(routerRps, rounds), median(routerRps, rounds) * size / 1e6, median(proxyRps, rounds),
        100 * median(share, rounds), rc, pc, median(cpuRatio, rounds), rc * 1000 * 1024 / size, pc * 1000 * 1024 / size;
    }
  }
  function median(a, n,    v, m, i, j, x) { # insertion sort: mawk has no asort
    m = 0; for (i = 1; i <= n; i++) { x = a[i]; j = ++m; while (j > 1 && v[j - 1] > x) { v[j] = v[j - 1]; j-- } v[j] = x }
    return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2;
  }' "$tmp/results"
echo "# $(date -u +%FT%TZ), $(scale_load_line) at the end"
