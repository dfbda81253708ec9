#!/usr/bin/env bash
# Demo of the kernel feedback loop with the real 10 s period (root): starts the router (the jar) in
# kernel mode on lo with its own pin directory, state file and free ports, sends 1000 nano requests
# whose guest works 80 ms (POST /v1/tasks/echo, {"simulate_ms":80}; 8 at a time, loopback), waits
# two periods, and prints `bpftool map dump pinned <pin dir>/score_thresholds` before and after,
# GET /adaptive and the recalibration events. Stops the router it started (by PID) and removes its
# pins. Refuses to run when something is already attached to the interface.
# Usage: bench/adaptive-demo.sh [REQUESTS] [CONCURRENCY]
set -euo pipefail
cd "$(dirname "$0")/.."

requests=${1:-1000}
concurrency=${2:-8}
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


data_port=$(free_port)
control_port=$(free_port)
while [ "$control_port" = "$data_port" ]; do control_port=$(free_port); done
pin_dir=/sys/fs/bpf/nxdemo-$$-$RANDOM
tmp=$(mktemp -d)
router_pid=""
sse_pid=""

cleanup() {
  if [ -n "$sse_pid" ]; then kill "$sse_pid" 2>/dev/null || true; fi
  if [ -n "$router_pid" ]; then
    kill -TERM "$router_pid" 2>/dev/null || true
    wait "$router_pid" 2>/dev/null || true
  fi
  # Removing the pins drops the maps' last user reference: the kernel cancels the timer.
  if [ -d "$pin_dir" ]; then rm -f "$pin_dir"/*; rmdir "$pin_dir"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

cat > "$tmp/config.json" <<JSON
{
  "dataPlane": { "host": "127.0.0.1", "port": $data_port, "testHooks": true },
  "control": { "host": "127.0.0.1", "port": $control_port, "stateFile": "$tmp/state.json" },
  "kernel": { "mode": "kernel", "pinDir": "$pin_dir", "interfaces": ["$iface"], "xdpMode": "generic" }
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
curl -sN "http://127.0.0.1:$control_port/events?types=recalibration,threshold" > "$tmp/events.txt" 2>/dev/null &
sse_pid=$!

echo "== router pid $router_pid, data plane :$data_port, control :$control_port, pins $pin_dir"
echo "== GET /adaptive (settings)"
curl -s "http://127.0.0.1:$control_port/adaptive"; echo
echo "== before: bpftool map dump pinned $pin_dir/score_thresholds"
bpftool map dump pinned "$pin_dir/score_thresholds"

echo "== sending $requests nano requests (simulate_ms 80, concurrency $concurrency)"
start=$(date +%s.%N)
seq 1 "$requests" | xargs -P "$concurrency" -I{} curl -s -o /dev/null \
  -w '%{http_code} %header{x-nx-tier}\n' -H 'Content-Type: application/json' \
  --data '{"prompt":"hi","simulate_ms":80}' "http://127.0.0.1:$data_port/v1/tasks/echo" > "$tmp/codes.txt"
end=$(date +%s.%N)
echo "   sent in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s; status and tier counts:"
sort "$tmp/codes.txt" | uniq -c | sed 's/^/   /'

period_s=$(curl -s "http://127.0.0.1:$control_port/adaptive" | sed -E 's/.*"period_ms":([0-9]+).*/\1/')
wait_s=$(( 2 * period_s / 1000 + 1 ))
echo "== waiting two periods (${wait_s} s)"
sleep "$wait_s"

echo "== after: bpftool map dump pinned $pin_dir/score_thresholds"
bpftool map dump pinned "$pin_dir/score_thresholds"
echo "== GET /adaptive"
curl -s "http://127.0.0.1:$control_port/adaptive"; echo
echo "== events (SSE /events?types=recalibration,threshold)"
kill "$sse_pid" 2>/dev/null || true
wait "$sse_pid" 2>/dev/null || true
grep '^data:' "$tmp/events.txt" | sed 's/^/   /' || echo "   (none)"
echo "== metrics"
curl -s "http://127.0.0.1:$control_port/metrics" | grep -E '^nexus_(recalibrations|latency_events)' | sed 's/^/   /'
