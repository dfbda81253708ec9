#!/usr/bin/env bash
# Data-plane benchmark, loopback, bounded, same run for every target:
#   bare      a bare Vert.x server answering the fixed OpenAI answer (the ceiling on this machine;
#             also the OpenAI upstream the router forwards to)
#   inline    the router's data plane in front of an in-process tier that answers at once
#             (stands in for the Wasm nano tier until the pools are merged)
#   wasm      the real router (the jar, user-space mode) on its default Wasm tiers: nano requests
#             answered by the Chicory nano pool (what issue 4's "nano through the router" means)
#   router    the real router (the jar, user-space mode) with every tier forwarding to `bare`
#   nginx     Debian nginx-light proxying to `bare` over a keepalive upstream (when installed:
#             apt-get install nginx-light), the reference for what one proxy hop costs here
# Each at concurrency 1 and 64 (closed loop, keep-alive), printing requests/s, P50 and P99 and
# the ratios, plus the server processes' CPU time per request over the measured window (user+sys
# from /proc; for `router` the router plus its upstream), which a busy shared machine distorts far
# less than throughput. Usage: bench/dataplane-bench.sh [SECONDS] [WARMUP_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
warmup=${2:-15}
instances=${INSTANCES:-$(nproc)}
loadgen_loops=${LOADGEN_LOOPS:-1}

source scripts/build-lib.sh
jar=$(nx_fresh_jar)
cp=$(nx_bench_classpath io.nexuscore.bench.LoadGenerator)

free_port() {
  while :; do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "$port"; return; fi
  done
}

wait_port() {
  for _ in $(seq 1 100); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench: nothing listening on port $1" >&2
  return 1
}

pids=()
tmp=$(mktemp -d)
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

bare_port=$(free_port); inline_port=$(free_port); router_port=$(free_port); control_port=$(free_port)
wasm_port=$(free_port); wasm_control_port=$(free_port)

java -cp "$cp" io.nexuscore.bench.BareServer "$bare_port" "$instances" > "$tmp/bare.log" 2>&1 &
bare_pid=$!; pids+=($bare_pid)
java -cp "$cp" io.nexuscore.bench.InlineRouter "$inline_port" "$instances" > "$tmp/inline.log" 2>&1 &
inline_pid=$!; pids+=($inline_pid)

tier() { # name -> tier config forwarding to the bare server
  echo "\"$1\": {\"model\": \"nexus-$1\", \"instances\": 64, \"queueCapacity\": 4096,
    \"upstream\": {\"baseUrl\": \"http://127.0.0.1:$bare_port/v1\", \"model\": \"bare\", \"timeoutMs\": 10000}}"
}
cat > "$tmp/router.json" <<JSON
{
  "dataPlane": {"host": "127.0.0.1", "port": $router_port, "instances": $instances},
  "control": {"port": $control_port, "stateFile": "$tmp/state.json"},
  "kernel": {"mode": "${MODE:-user}"},
  "tiers": { $(tier nano), $(tier small), $(tier large) }
}
JSON
java -jar "$jar" --config "$tmp/router.json" > "$tmp/router.log" 2>&1 &
router_pid=$!; pids+=($router_pid)

cat > "$tmp/wasm.json" <<JSON
{
  "dataPlane": {"host": "127.0.0.1", "port": $wasm_port, "instances": $instances},
  "control": {"port": $wasm_control_port, "stateFile": "$tmp/wasm-state.json"},
  "kernel": {"mode": "${MODE:-user}"}
}
JSON
java -jar "$jar" --config "$tmp/wasm.json" > "$tmp/wasm.log" 2>&1 &
wasm_pid=$!; pids+=($wasm_pid)



targets=("bare:$bare_port:$bare_pid" "inline:$inline_port:$inline_pid" "wasm:$wasm_port:$wasm_pid" "router:$router_port:$router_pid $bare_pid")
if command -v nginx > /dev/null; then
  nginx_port=$(free_port)
  mkdir -p "$tmp/nginx"
  cat > "$tmp/nginx.conf" <<NGINX
worker_processes $instances;
pid $tmp/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body; proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi; uwsgi_temp_path $tmp/nginx/uwsgi; scgi_temp_path $tmp/nginx/scgi;
  upstream bare { server 127.0.0.1:$bare_port; keepalive 64; }
  server {
    listen 127.0.0.1:$nginx_port;
    location / { proxy_pass http://bare; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
NGINX
  nginx -c "$tmp/nginx.conf" -p "$tmp/nginx" -g 'daemon off;' &
  nginx_pid=$!; pids+=($nginx_pid)
  wait_port "$nginx_port"
  nginx_workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
  targets+=("nginx:$nginx_port:$nginx_pid $nginx_workers$bare_pid")
else
  echo "# nginx not installed (apt-get install nginx-light): no nginx comparison" >&2
fi

wait_port "$bare_port"; wait_port "$inline_port"; wait_port "$router_port"; wait_port "$wasm_port"
echo "# $(date -u +%FT%TZ), $(nproc) cores, ${seconds}s measured after ${warmup}s warm-up, $instances server instances, loadgen $loadgen_loops event loop(s)"
echo "# $(head -1 "$tmp/bare.log")"
echo "# $(head -1 "$tmp/inline.log")"

results="$tmp/results"
# c=64 first: the JIT warms faster under load, and the c=1 runs then meet compiled code.
for c in 64 1; do
  for target in "${targets[@]}"; do
    IFS=: read -r name port servers <<< "$target"
    java -cp "$cp" io.nexuscore.bench.LoadGenerator "$name" "$port" /v1/chat/completions "$c" "$seconds" "$warmup" \
      "$loadgen_loops" "${servers// /,}" 2>/dev/null | tee -a "$results"
  done
done

awk '
  { split($2, c, "="); split($4, r, "="); split($5, p50, "="); split($6, p99, "=");
    split($8, u, "="); rps[$1, c[2]] = r[2]; p[$1, c[2]] = p50[2]; q[$1, c[2]] = p99[2]; cpu[$1, c[2]] = u[2] }
  END {
    printf "\nsummary\n";
    for (i = 1; i <= 2; i++) {
      cc = (i == 1) ? 64 : 1;
      printf "c=%-3d wasm nano/bare rps %.0f%% (P50 %+d us, P99 %+d us over bare)\n", cc, 100 * rps["wasm", cc] / rps["bare", cc],
        p["wasm", cc] - p["bare", cc], q["wasm", cc] - q["bare", cc];
      printf "      inline/bare rps %.0f%%  router->upstream/bare rps %.0f%%  added P50: inline %+d us, router hop %+d us  added P99 router hop %+d us  cpu/req: bare %.1f us, inline %.1f us, router+upstream %.1f us\n",
        100 * rps["inline", cc] / rps["bare", cc], 100 * rps["router", cc] / rps["bare", cc],
        p["inline", cc] - p["bare", cc], p["router", cc] - p["bare", cc], q["router", cc] - q["bare", cc],
        cpu["bare", cc], cpu["inline", cc], cpu["router", cc];
      if (("nginx", cc) in rps)
        printf "       nginx->upstream/bare rps %.0f%%  added P50 nginx hop %+d us  added P99 nginx hop %+d us  cpu/req nginx+upstream %.1f us  router/nginx rps %.0f%%\n",
          100 * rps["nginx", cc] / rps["bare", cc], p["nginx", cc] - p["bare", cc], q["nginx", cc] - q["bare", cc],
          cpu["nginx", cc], 100 * rps["router", cc] / rps["nginx", cc];
    }
  }' "$results"

if grep -q "native transport off" "$tmp/router.log"; then echo "# WARNING: router without native transport" >&2; fi
