#!/usr/bin/env bash
# Peer benchmark: the same request mix through NexusCore and through Portkey's open-source gateway
# (npm @portkey-ai/gateway, installed here into a temp dir; conditional routing over three targets)
# to the same three local mock OpenAI upstreams, plus direct calls, in one run
# (io.nexuscore.bench.PeerBench). Everything listens on 127.0.0.1 and is stopped on exit (by PID).
#   bench/peer-bench.sh [--requests 3000] [--concurrency 1,32]
# NexusCore runs with its tiers backed by the mocks, in user-space mode by default (so it never
# touches an XDP program already on lo); PEER_NEXUS_MODE=kernel (root) runs the kernel path.
# Ports: PEER_BASE_PORT (default 19100): mocks +1..+3, NexusCore data +10 / control +11, Portkey +20.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

base="${PEER_BASE_PORT:-19100}"
portkey_version="${PORTKEY_VERSION:-1.15.2}"
tmp="$(mktemp -d /tmp/nexuscore-peer.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() {   # URL DESCRIPTION PID
  for _ in $(seq 1 120); do
    if curl -s -o /dev/null --max-time 2 "$1"; then return 0; fi
    kill -0 "$3" 2>/dev/null || { echo "peer-bench: $2 exited; log:" >&2; cat "$tmp/$2.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "peer-bench: $2 did not answer at $1; log:" >&2; tail -n 30 "$tmp/$2.log" >&2; exit 1
}

# The router jar and the benchmark classes.
jar="$(nx_fresh_jar)"
cp_="$(nx_bench_classpath io.nexuscore.bench.PeerBench)"

echo "peer-bench: installing @portkey-ai/gateway@$portkey_version (npm, into $tmp)"
npm install --silent --no-audit --no-fund --prefix "$tmp/portkey" "@portkey-ai/gateway@$portkey_version" >"$tmp/npm.log" 2>&1 \
  || { cat "$tmp/npm.log" >&2; exit 1; }

up1="http://127.0.0.1:$((base + 1))" up2="http://127.0.0.1:$((base + 2))" up3="http://127.0.0.1:$((base + 3))"
java -cp "$cp_" io.nexuscore.bench.MockOpenAi $((base + 1)) $((base + 2)) $((base + 3)) >"$tmp/mock.log" 2>&1 &
pids+=($!)
wait_for "$up3/" mock $!

cat >"$tmp/nexuscore.json" <<JSON
{
  "dataPlane": { "host": "127.0.0.1", "port": $((base + 10)) },
  "control": { "port": $((base + 11)), "stateFile": "$tmp/state.json" },
  "kernel": { "mode": "${PEER_NEXUS_MODE:-user}", "pinDir": "/sys/fs/bpf/nexuscore-peer-$$" },
  "tiers": {
    "nano":  { "upstream": { "baseUrl": "$up1/v1", "model": "nexus-nano",  "timeoutMs": 30000 } },
    "small": { "upstream": { "baseUrl": "$up2/v1", "model": "nexus-small", "timeoutMs": 30000 } },
    "large": { "upstream": { "baseUrl": "$up3/v1", "model": "nexus-large", "timeoutMs": 30000 } }
  }
}
JSON
NEXUSCORE_CONFIG="$tmp/nexuscore.json" java -jar "$jar" >"$tmp/nexuscore.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$((base + 10))/" nexuscore $!

NODE_ENV=production TRUSTED_CUSTOM_HOSTS=127.0.0.1,localhost \
  node "$tmp/portkey/node_modules/@portkey-ai/gateway/build/start-server.js" --port=$((base + 20)) --headless \
  >"$tmp/portkey.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$((base + 20))/" portkey $!

echo "peer-bench: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), NexusCore mode ${PEER_NEXUS_MODE:-user}, Portkey $portkey_version on node $(node --version)"
java -cp "$cp_" io.nexuscore.bench.PeerBench --upstreams "$up1,$up2,$up3" \
  --nexuscore "http://127.0.0.1:$((base + 10))" --portkey "http://127.0.0.1:$((base + 20))" "$@"
if [ -d "/sys/fs/bpf/nexuscore-peer-$$" ]; then
  kill "${pids[1]}"; wait "${pids[1]}" 2>/dev/null || true
  NEXUSCORE_CONFIG="$tmp/nexuscore.json" NEXUSCORE_RUN_DIR="$tmp/run" ./cleanup.sh >/dev/null
fi
