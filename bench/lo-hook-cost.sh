#!/usr/bin/env bash
# What kernel mode costs the router's hop on loopback, and how much of it is generic XDP itself:
# the router on its default Wasm tiers (nano answered by the Chicory pool) under wrk at c=64, in
# three configurations interleaved round after round:
#   user      user mode: nothing attached to lo
#   user+xdp  user mode with an XDP program that only returns XDP_PASS on lo in generic mode
#             (bench/bpf/nexus_empty.bpf.c): the skb copy generic XDP makes before any program
#             runs, with none of the router's own kernel work
#   kernel    kernel mode, the product's default: the classifier at XDP and the TC chain on lo
# Prints per point: req/s, P50, the router's CPU per request (user+sys from /proc) and the whole
# machine's busy CPU per request (/proc/stat: on loopback the receive path of a request runs in
# the sender's context, so the XDP scoring of a request is billed to wrk, not to the router).
#
# Usage: bench/lo-hook-cost.sh [ROUNDS=3] [SECONDS=10]     env: WARM=40 (s of c=64 before each point)
# Takes /tmp/nx-bench.lock for the whole run and /tmp/nx-lo.lock while something is attached to lo;
# each router gets its own pin dir, removed afterwards; every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "lo-hook-cost: needs root (attaches XDP and TC to lo)" >&2; exit 1; fi
bash scripts/install-deps.sh --bench   # wrk

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi

rounds=${1:-3}
seconds=${2:-10}
warm=${WARM:-40}

source scripts/build-lib.sh
source bench/bench-lib.sh
bash scripts/mount-bpffs.sh
jar=$(nx_fresh_jar)
tmp=$(mktemp -d)
clang -O2 -g -target bpf -Wall -Werror -Itarget/bpf-include -c bench/bpf/nexus_empty.bpf.c -o "$tmp/empty.o"

router_pid=""
pin_dir=""
attached=""
cleanup() {
  [ -n "$attached" ] && bpftool net detach xdpgeneric dev lo 2>/dev/null || true
  if [ -n "$router_pid" ]; then kill "$router_pid" 2>/dev/null || true; wait "$router_pid" 2>/dev/null || true; fi
  [ -n "$pin_dir" ] && rm -rf "$pin_dir" "$pin_dir-empty"
  rm -rf "$tmp"
}
trap cleanup EXIT

short_chat_lua "$tmp/post.lua"

busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

point() { # name -> one line; the router runs as router_pid on data_port
  local name=$1 url="http://127.0.0.1:$data_port/v1/chat/completions"
  wrk -t1 -c64 -d"${warm}s" -s "$tmp/post.lua" "$url" > /dev/null
  local busy0 router0 busy1 router1
  busy0=$(busy_ticks); router0=$(cpu_ticks "$router_pid")
  wrk -t1 -c64 -d"${seconds}s" --latency -s "$tmp/post.lua" "$url" > "$tmp/wrk.out"
  busy1=$(busy_ticks); router1=$(cpu_ticks "$router_pid")
  local requests rps p50 errors
  requests=$(awk '/requests in/ { print $1 }' "$tmp/wrk.out")
  rps=$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$tmp/wrk.out")
  p50=$(awk '$1 == "50%" { print $2 }' "$tmp/wrk.out")
  errors=$(awk '/Non-2xx/ { n += $NF } /Socket errors/ { gsub(",", ""); n += $4 + $6 + $8 + $10 } END { print n + 0 }' "$tmp/wrk.out")
  printf "%-9s c=64 rps=%-7d p50=%-8s errors=%-3d router_cpu_us_per_req=%-6.1f machine_busy_us_per_req=%.1f\n" \
    "$name" "$rps" "$p50" "$errors" \
    "$(awk -v t=$((router1 - router0)) -v hz="$(getconf CLK_TCK)" -v n="$requests" 'BEGIN { print n ? t * 1e6 / hz / n : 0 }')" \
    "$(awk -v t=$((busy1 - busy0)) -v hz="$(getconf CLK_TCK)" -v n="$requests" 'BEGIN { print n ? t * 1e6 / hz / n : 0 }')"
}

echo "# lo-hook-cost: $(basename "$jar"), Wasm tiers, c=64, ${seconds}s per point after ${warm}s at c=64, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
exec 9> /tmp/nx-lo.lock
flock 9
for round in $(seq 1 "$rounds"); do
  for config in user user+xdp kernel; do
    mode=user; [ "$config" = kernel ] && mode=kernel
    data_port=$(free_port); control_port=$(free_port); pin_dir=/sys/fs/bpf/nexuscore-lohook-$$-$round-$mode
    cat > "$tmp/router.json" <<JSON
{"dataPlane": {"host": "127.0.0.1", "port": $data_port, "instances": 2},
 "control": {"port": $control_port, "stateFile": "$tmp/state.json"},
 "kernel": {"mode": "$mode", "pinDir": "$pin_dir", "interfaces": ["lo"]}}
JSON
    java -jar "$jar" --config "$tmp/router.json" > "$tmp/router.log" 2>&1 &
    router_pid=$!
    wait_port "$data_port" "$router_pid" || { tail -20 "$tmp/router.log" >&2; exit 1; }
    for _ in $(seq 1 100); do grep -q "data plane on" "$tmp/router.log" && break; sleep 0.1; done
    grep -q "$mode mode" "$tmp/router.log" \
      || { echo "lo-hook-cost: the router did not start in $mode mode" >&2; tail -20 "$tmp/router.log" >&2; exit 1; }
    if [ "$config" = user+xdp ]; then
      # bpftool, not ip's own loader (which leaves /sys/fs/bpf/{tc,ip,xdp} behind)
      bpftool prog load "$tmp/empty.o" "$pin_dir-empty" type xdp
      bpftool net attach xdpgeneric pinned "$pin_dir-empty" dev lo
      attached=1
    fi
    printf "round %d " "$round"
    point "$config"
    if [ -n "$attached" ]; then bpftool net detach xdpgeneric dev lo; rm -f "$pin_dir-empty"; attached=""; fi
    kill "$router_pid"; wait "$router_pid" 2>/dev/null || true; router_pid=""
    rm -rf "$pin_dir"; pin_dir=""
  done
done
