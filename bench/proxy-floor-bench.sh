#!/usr/bin/env bash
# The floor of one proxy hop on the JVM against nginx's, in alternating rounds: what issue 14's
# "router >= 100 % of nginx" leaves for the router's own work (routing, kernel mode, meters) on top
# of the stack it is written on. Peers, all in front of the same bare Vert.x upstream on loopback:
#   nginx        Debian nginx-light, keepalive upstream (as in dataplane-bench.sh)
#   vertx-proxy  Vert.x server -> Vert.x client per event loop (the router's stack)
#   netty-proxy  Netty server codec -> keep-alive Netty client codec per event loop (one layer
#                below Vert.x's HTTP server and client: where a data plane on Netty's codecs starts)
#   bare         the upstream alone (for the added P50: a peer's P50 less bare's)
# Every round measures each peer once with wrk (c=64 by default), the order rotating each round, so
# the VM's slow phases fall on all peers alike. Prints every point (req/s, P50, the proxy's and the
# upstream's CPU per request), then per peer the median req/s, its ratio to nginx's median, each
# round's ratios, and the median added P50. No kernel programs are attached: this is the stack's
# floor, not the router.
#
# Usage: bench/proxy-floor-bench.sh [ROUNDS=5] [SECONDS=8]   CONNS=64  WARM=60  TRANSPORT=auto|io_uring|epoll
# Takes /tmp/nx-bench.lock; every process started here is stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench   # wrk and nginx-light, which ./test.sh does not need

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

rounds=${1:-5}
seconds=${2:-8}
conns=${CONNS:-64}
warm=${WARM:-60}
transport=${TRANSPORT:-auto}
instances=$(nproc)

source scripts/build-lib.sh
source bench/bench-lib.sh
cp=$(nx_bench_classpath io.nexuscore.bench.LoadGenerator)

pids=()
tmp=$(mktemp -d)
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

short_chat_lua "$tmp/post.lua"

start_java() { # name port main args...
  local name=$1 port=$2; shift 2
  java -Dnexus.transport="$transport" -cp "$cp" "$@" > "$tmp/$name.log" 2>&1 &
  pids+=($!)
  wait_port "$port" "$!"
  echo "# $(head -1 "$tmp/$name.log")"
}

bare_port=$(free_port)
start_java bare "$bare_port" io.nexuscore.bench.BareServer "$bare_port" "$instances"
bare_pid=${pids[-1]}
declare -A port pid_of
port[bare]=$bare_port; pid_of[bare]=$bare_pid
port[vertx-proxy]=$(free_port)
start_java vertx-proxy "${port[vertx-proxy]}" io.nexuscore.bench.VertxProxy "${port[vertx-proxy]}" "$bare_port" "$instances"
pid_of[vertx-proxy]=${pids[-1]}
port[netty-proxy]=$(free_port)
start_java netty-proxy "${port[netty-proxy]}" io.nexuscore.bench.NettyProxy "${port[netty-proxy]}" "$bare_port" "$instances"
pid_of[netty-proxy]=${pids[-1]}
port[nginx]=$(free_port)
mkdir -p "$tmp/nginx"
nginx_proxy_conf "$tmp/nginx" "${port[nginx]}" "$bare_port" "$instances"
nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" -g 'daemon off;' &
pids+=($!); pid_of[nginx]=$!
wait_port "${port[nginx]}" "${pid_of[nginx]}"
for _ in $(seq 1 50); do pgrep -P "${pid_of[nginx]}" > /dev/null && break; sleep 0.1; done # the master listens before it forks
pid_of[nginx]="${pid_of[nginx]} $(pgrep -P "${pid_of[nginx]}" | tr '\n' ' ' || true)"

url() { echo "http://127.0.0.1:${port[$1]}/v1/chat/completions"; }

echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of ${seconds}s at c=$conns per peer"
# The JVM peers compile under load first: a WARM-second (60) warm-up each at c=64 (the JIT settles
# faster under load), so no round measures the JIT.
for name in vertx-proxy netty-proxy bare; do
  wrk -t1 -c64 -d"${warm}s" -s "$tmp/post.lua" "$(url "$name")" > /dev/null
done

peers=(nginx vertx-proxy netty-proxy bare)
for round in $(seq 1 "$rounds"); do
  for i in 0 1 2 3; do
    name=${peers[$(((i + round) % 4))]}
    # shellcheck disable=SC2086
    before_proxy=$(cpu_ticks ${pid_of[$name]}); before_bare=$(cpu_ticks "$bare_pid")
    wrk -t1 -c"$conns" -d"${seconds}s" --latency -s "$tmp/post.lua" "$(url "$name")" > "$tmp/wrk.out"
    # shellcheck disable=SC2086
    after_proxy=$(cpu_ticks ${pid_of[$name]}); after_bare=$(cpu_ticks "$bare_pid")
    [ "$name" = bare ] && after_bare=$before_bare # bare is the proxy here: its CPU counted once
    awk -v name="$name" -v round="$round" -v hz="$(getconf CLK_TCK)" \
        -v proxy=$((after_proxy - before_proxy)) -v bare=$((after_bare - before_bare)) '
      /requests in/ { n = $1 } /^Requests\/sec/ { rps = $2 }
      $1 == "50%" { p50 = $2 + 0; if ($2 ~ /ms$/) p50 *= 1000; else if ($2 !~ /us$/) p50 *= 1000000 }
      /Non-2xx|Socket errors/ { errors = errors " " $0 }
      END { printf "round %d %-12s rps=%-8.0f p50_us=%-6.0f proxy_cpu_us=%-5.1f upstream_cpu_us=%.1f%s\n",
              round, name, rps, p50, n ? proxy * 1e6 / hz / n : 0, n ? bare * 1e6 / hz / n : 0, errors ? " ERRORS:" errors : "" }' \
      "$tmp/wrk.out" | tee -a "$tmp/results"
  done
done

awk '
  { split($4, r, "="); split($5, l, "="); rps[$3, $2] = r[2]; lat[$3, $2] = l[2]; names[$3] = 1; if ($2 > rounds) rounds = $2 }
  END {
    printf "\nsummary (c='"$conns"', %d rounds; ratios against nginx within the same round)\n", rounds;
    for (name in names) {
      med[name] = median(rps, name, rounds);
      for (i = 1; i <= rounds; i++) added[name, i] = lat[name, i] - lat["bare", i];
      medAdded[name] = median(added, name, rounds);
    }
    for (name in names) {
      if (name == "bare") continue;
      line = ""; for (i = 1; i <= rounds; i++) line = line sprintf(" %3.0f%%", 100 * rps[name, i] / rps["nginx", i]);
      printf "%-12s median %6.0f req/s, %3.0f%% of nginx'"'"'s median, added P50 %+d us (median of the rounds); per round:%s\n",
        name, med[name], 100 * med[name] / med["nginx"], medAdded[name], line;
    }
  }
  function median(a, name, n,    v, m, i, j, x) { # insertion sort: mawk has no asort
    m = 0; for (i = 1; i <= n; i++) { x = a[name, i]; j = ++m; while (j > 1 && v[j - 1] > x) { v[j] = v[j - 1]; j-- } v[j] = x }
    return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2;
  }' "$tmp/results"
