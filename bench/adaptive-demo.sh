#!/usr/bin/env bash
# Demo of the kernel feedback loop with the real 10 s period and the default adaptive settings (root).
# Starts a local OpenAI-compatible model server that answers every request in 82 ms
# (io.nexuscore.bench.MockOpenAi --delay-ms, loopback only) and the router (the jar) in kernel mode on
# lo with its own pin directory, state file and free ports, the nano tier forwarding to that server.
# Then it sends short real chat prompts (POST /v1/chat/completions with curl, so they score nano;
# CONCURRENCY clients, each a keep-alive connection per batch of 10) until the kernel has lowered
# nano_max to 45 or MAX_SECONDS have passed, and prints `bpftool map dump pinned <pin dir>/score_thresholds`
# before and after, GET /adaptive, the recalibration and threshold events, the metrics and the
# requests' status, tier and X-NX-Route-Source counts.
# The latency is real: the router waits 82 ms on its upstream, over its nano target of 50 ms.
# Why 82: a period over target cuts nano_max by step * p95 / target (at least step 5, at most 4 steps),
# with p95 the floor of its histogram bucket (8 per power of two of microseconds). Every sample is at
# least the upstream's delay, and 82,000 us falls in the bucket whose floor is 81,920 us: cut
# 5 * 81,920 / 50,000 = 8, so two periods reach 60 -> 52 -> 44. Below 81.92 ms the floor is 73,728 us
# (cut 7: 60 -> 53 -> 46, three periods): 80 or 81 ms would count on the router's own time to lift the
# P95 over 81.92 ms (it did on 2026-12-07: P95 98.3 and 90.1 ms at 80 ms, 8 clients, a 2-core VM).
# 82 is the smallest whole delay that reaches 45 in two periods whatever the router adds;
# a loaded machine only raises the P95, and so the cut (at most 20 a period).
# Requests with simulate_ms (dataPlane.testHooks) never feed the loop, by design.
# Stops what it started (by PID) and removes its pins. Refuses to run when something is already
# attached to the interface.
# Usage: bench/adaptive-demo.sh [CONCURRENCY] [MAX_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

concurrency=${1:-8}
max_seconds=${2:-45}
target_nano_max=45
delay_ms=82
iface=${IFACE:-lo}

if [ "$(id -u)" != 0 ]; then echo "adaptive-demo: needs root (eBPF)" >&2; exit 1; fi
attached=$(bpftool net show dev "$iface" | grep -Ev '^(xdp|tc|flow_dissector|netfilter):?$|^$' || true)
if [ -n "$attached" ]; then
  echo "adaptive-demo: $iface already has programs attached; refusing to touch it:" >&2
  echo "$attached" >&2
  exit 1
fi
bash scripts/mount-bpffs.sh

source scripts/build-lib.sh
source bench/bench-lib.sh
jar=$(nx_fresh_jar)
bench_cp=$(nx_bench_classpath io.nexuscore.bench.MockOpenAi)

data_port=$(free_port)
control_port=$(free_port)
while [ "$control_port" = "$data_port" ]; do control_port=$(free_port); done
upstream_port=$(free_port)
while [ "$upstream_port" = "$data_port" ] || [ "$upstream_port" = "$control_port" ]; do upstream_port=$(free_port); done
pin_dir=/sys/fs/bpf/nxdemo-$$-$RANDOM
tmp=$(mktemp -d)
router_pid=""
upstream_pid=""
sse_pid=""
load_pids=()

cleanup() {
  touch "$tmp/stop" 2>/dev/null || true
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${load_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$sse_pid" ]; then kill "$sse_pid" 2>/dev/null || true; fi
  if [ -n "$router_pid" ]; then
    kill -TERM "$router_pid" 2>/dev/null || true
    wait "$router_pid" 2>/dev/null || true
  fi
  if [ -n "$upstream_pid" ]; then
    kill -TERM "$upstream_pid" 2>/dev/null || true
    wait "$upstream_pid" 2>/dev/null || true
  fi
  # Removing the pins drops the maps' last user reference: the kernel cancels the timer.
  if [ -d "$pin_dir" ]; then rm -f "$pin_dir"/*; rmdir "$pin_dir"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

java -cp "$bench_cp" io.nexuscore.bench.MockOpenAi --delay-ms "$delay_ms" "$upstream_port" > "$tmp/upstream.log" 2>&1 &
upstream_pid=$!
wait_port "$upstream_port" "$upstream_pid" || { cat "$tmp/upstream.log" >&2; exit 1; }

# Default adaptive settings (none given); only the nano tier's backend changes.
cat > "$tmp/config.json" <<JSON
{
  "dataPlane": { "host": "127.0.0.1", "port": $data_port },
  "control": { "host": "127.0.0.1", "port": $control_port, "stateFile": "$tmp/state.json" },
  "kernel": { "mode": "kernel", "pinDir": "$pin_dir", "interfaces": ["$iface"], "xdpMode": "generic" },
  "tiers": { "nano": { "upstream": { "baseUrl": "http://127.0.0.1:$upstream_port/v1", "model": "mock-nano" } } }
}
JSON

java -jar "$jar" --config "$tmp/config.json" > "$tmp/router.log" 2>&1 &
router_pid=$!
for _ in $(seq 1 300); do
  if curl -sf "http://127.0.0.1:$control_port/healthz" > /dev/null 2>&1; then break; fi
  if ! kill -0 "$router_pid" 2>/dev/null; then cat "$tmp/router.log" >&2; echo "adaptive-demo: the router exited" >&2; exit 1; fi
  sleep 0.1
done
curl -sf "http://127.0.0.1:$control_port/healthz" > /dev/null || { cat "$tmp/router.log" >&2; exit 1; }
# GET /events needs the control token, which the router generated beside the state file at start;
# curl reads the header from a 0600 file so the token stays out of the process list.
(umask 077; printf 'Authorization: Bearer %s\n' "$(cat "$tmp/control.token")" > "$tmp/auth.header")
curl -sN -H @"$tmp/auth.header" "http://127.0.0.1:$control_port/events?types=recalibration,threshold" \
  > "$tmp/events.txt" 2>/dev/null &
sse_pid=$!

nano_max() {
  bpftool -j map dump pinned "$pin_dir/score_thresholds" | sed -nE 's/.*"nano_max": ?([0-9]+).*/\1/p' | head -1
}

echo "== router pid $router_pid, data plane :$data_port, control :$control_port, pins $pin_dir"
echo "== nano upstream pid $upstream_pid on 127.0.0.1:$upstream_port, answers after $delay_ms ms"
echo "== GET /adaptive (settings)"
curl -s "http://127.0.0.1:$control_port/adaptive"; echo
echo "== before: bpftool map dump pinned $pin_dir/score_thresholds"
bpftool map dump pinned "$pin_dir/score_thresholds"

prompts=("Say hi." "What is 2 + 2?" "Name a color." "Translate yes to French." "Is water wet?"
         "Spell cat backwards." "What day follows Monday?" "Give me one word for happy.")
# One client: batches of 10 chat requests on one keep-alive connection, until the stop file appears.
client() {
  local n=$1 i=0 args
  while [ ! -e "$tmp/stop" ]; do
    args=()
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      local p=${prompts[$(( (n + i) % ${#prompts[@]} ))]}
      i=$((i + 1))
      [ ${#args[@]} -gt 0 ] && args+=(--next)
      args+=(-s -m 10 -o /dev/null -w '%{http_code} %header{x-nx-tier} %header{x-nx-route-source}\n'
             -H 'Content-Type: application/json' -H 'Expect:'
             --data "{\"model\":\"auto\",\"messages\":[{\"role\":\"user\",\"content\":\"$p\"}]}"
             "http://127.0.0.1:$data_port/v1/chat/completions")
    done
    curl "${args[@]}" >> "$tmp/codes.$n.txt" || true
  done
}

echo "== sending short chat prompts ($concurrency clients) until nano_max <= $target_nano_max (at most $max_seconds s)"
start=$(date +%s.%N)
for n in $(seq 1 "$concurrency"); do client "$n" & load_pids+=($!); done
deadline=$(( $(date +%s) + max_seconds ))
last=$(nano_max)
while [ "$(date +%s)" -lt "$deadline" ]; do
  now=$(nano_max)
  if [ "$now" != "$last" ]; then
    echo "   +$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s: nano_max $last -> $now"
    last=$now
  fi
  [ "$now" -le "$target_nano_max" ] && break
  sleep 0.2
done
touch "$tmp/stop"
for pid in "${load_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
load_pids=()
end=$(date +%s.%N)
cat "$tmp"/codes.*.txt > "$tmp/codes.txt" 2>/dev/null || true
echo "   $(wc -l < "$tmp/codes.txt") requests in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s; status, tier and route source (X-NX-Route-Source) counts:"
sort "$tmp/codes.txt" | uniq -c | sort -rn | sed 's/^/   /'

echo "== after: bpftool map dump pinned $pin_dir/score_thresholds"
bpftool map dump pinned "$pin_dir/score_thresholds"
echo "== GET /adaptive"
curl -s "http://127.0.0.1:$control_port/adaptive"; echo
echo "== events (SSE /events?types=recalibration,threshold)"
kill "$sse_pid" 2>/dev/null || true
wait "$sse_pid" 2>/dev/null || true
sse_pid=""
grep '^data:' "$tmp/events.txt" | sed 's/^/   /' || echo "   (none)"
echo "== metrics"
curl -s "http://127.0.0.1:$control_port/metrics" | grep -E '^nexus_(recalibrations|latency_events)' | sed 's/^/   /'
final=$(nano_max)
if [ "$final" -gt "$target_nano_max" ]; then
  echo "adaptive-demo: nano_max is $final after $max_seconds s, not <= $target_nano_max" >&2
  exit 1
fi
