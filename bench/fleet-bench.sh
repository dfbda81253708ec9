#!/usr/bin/env bash
# Fleet propagation benchmark: three routers (user-space mode, one JVM each) in one fleet on
# 127.0.0.1; CHANGES (default 100) PATCH /thresholds round-robin over the three; for each, the time
# from sending the PATCH until all three control planes answer GET /thresholds with the new value.
# Prints P50/P90/P99/max and the load average. Stops only the routers it started (by PID).
#   bench/fleet-bench.sh            CHANGES=100 FLEET_BASE_PORT=18700
# Ports: FLEET_BASE_PORT +1..+3 data plane, +11..+13 control plane, +21..+23 Hazelcast.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

base="${FLEET_BASE_PORT:-18700}"
changes="${CHANGES:-100}"
tmp="$(mktemp -d /tmp/nexuscore-fleet.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

jar="$(nx_fresh_jar)"
# One secret for the three (cluster.secretFile: root- or self-owned, 0600), removed with $tmp.
(umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/fleet.secret")
members="\"127.0.0.1:$((base + 21))\", \"127.0.0.1:$((base + 22))\", \"127.0.0.1:$((base + 23))\""
for i in 1 2 3; do
  mkdir -p "$tmp/n$i"
  cat >"$tmp/n$i/config.json" <<JSON
{
  "dataPlane": { "host": "127.0.0.1", "port": $((base + i)), "instances": 1 },
  "control": { "port": $((base + 10 + i)), "auth": "none", "stateFile": "$tmp/n$i/state.json" },
  "kernel": { "mode": "user" },
  "metrics": { "kernelTiming": false, "tlbFlushes": false },
  "tiers": { "nano": { "instances": 1 }, "small": { "instances": 1 }, "large": { "instances": 1 } },
  "cluster": { "enabled": true, "host": "127.0.0.1", "port": $((base + 20 + i)), "node": "n$i",
               "members": [ $members ], "secretFile": "$tmp/fleet.secret" }
}
JSON
  (cd "$tmp/n$i" && exec java -Xmx512m -jar "$jar" --config config.json >router.log 2>&1) &
  pids+=($!)
done

control() { echo "http://127.0.0.1:$((base + 10 + $1))"; }
echo "fleet-bench: waiting for three routers to serve and see each other"
deadline=$((SECONDS + 240))
for i in 1 2 3; do
  until curl -s --max-time 2 "$(control "$i")/fleet" | grep -q '"cluster_members":3' \
      && curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$((base + i))/v1/models"; do
    kill -0 "${pids[$((i - 1))]}" 2>/dev/null || { echo "router n$i exited:" >&2; tail -n 40 "$tmp/n$i/router.log" >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { echo "router n$i not up in 240 s:" >&2; tail -n 40 "$tmp/n$i/router.log" >&2; exit 1; }
    sleep 0.5
  done
done

load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
now_us() { echo $(( $(date +%s%N) / 1000 )); }
samples="$tmp/samples"
: >"$samples"
echo "fleet-bench: $changes changes, round-robin over n1..n3"
for c in $(seq 1 "$changes"); do
  node=$(( (c - 1) % 3 + 1 ))
  value=$(( 20 + c % 90 ))   # 21..109, never the previous value
  start=$(now_us)
  curl -s -o /dev/null --max-time 10 -X PATCH -H 'Content-Type: application/merge-patch+json' \
    -d "{\"nano_max\": $value}" "$(control "$node")/thresholds"
  until [ "$(curl -s --max-time 5 "$(control 1)/thresholds" "$(control 2)/thresholds" "$(control 3)/thresholds" \
      | grep -o "\"nano_max\":$value," | wc -l)" -eq 3 ]; do
    [ $(( $(now_us) - start )) -lt 30000000 ] || { echo "change $c ($value) not everywhere in 30 s" >&2; exit 1; }
  done
  echo $(( $(now_us) - start )) >>"$samples"
done

sort -n "$samples" | awk -v start="$load_start" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v cpus="$(nproc)" '
  { v[NR] = $1 }
  END {
    n = NR
    printf "fleet-bench: PATCH on one router until all three serve it (%d changes, 3 routers, %d CPUs)\n", n, cpus
    printf "  P50 %.1f ms   P90 %.1f ms   P99 %.1f ms   max %.1f ms\n", v[int(n*0.50+0.5)]/1000, v[int(n*0.90+0.5)]/1000, v[int(n*0.99+0.5)]/1000, v[n]/1000
    printf "  load average (1/5/15 min) at the start: %s, at the end: %s\n", start, load
  }'
# GET /fleet is refreshed every second: give the views two.
sleep 2
versions=$(for i in 1 2 3; do curl -s "$(control "$i")/fleet" | grep -o '"policy":{"version":[0-9]*' | grep -o '[0-9]*$'; done | sort -u | tr '\n' ' ')
echo "  policy version held by n1..n3 at the end: $versions(one value = converged)"
