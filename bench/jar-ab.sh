#!/usr/bin/env bash
# A/B of router builds on the upstream path (or the Wasm path, TARGET=wasm), kernel mode by default, peers in the same rounds:
#   each round measures bare, nginx → bare and vertx-proxy → bare, then every given router jar in
#   turn (started fresh, its tiers forwarding to bare, warmed WARM seconds at c=64, measured SECONDS
#   at c=64 with wrk), printing req/s, P50, the servers' CPU per request (user and sys from /proc;
#   for forwarding targets the proxy plus its upstream) and how often the proxy's threads were
#   preempted (involuntary context switches) per request.
# On a noisy machine one pair of load runs cannot show a change worth a few per cent: run several
# rounds and read the pairs, not one line.
#
# Usage: bench/jar-ab.sh ROUNDS JAR...      env: SECONDS_PER_POINT=8 WARM=60 MODES=kernel TRANSPORT=auto TARGET=upstream
# TRANSPORT (auto, io_uring, epoll) is the I/O engine of every jar and of the Vert.x peers; a jar
# built before dataPlane.transport existed runs on epoll whatever it says (and refuses the setting:
# leave TRANSPORT unset for such jars).
# MODES="kernel user" runs every jar in both modes (what the kernel path costs on lo: generic XDP
# and TC run on every packet of both legs).
# Save a jar before a change (cp target/nexuscore-*.jar /tmp/before.jar), build, then
#   bash bench/jar-ab.sh 2 /tmp/before.jar target/nexuscore-0.1.0-SNAPSHOT.jar
# Takes /tmp/nx-bench.lock for the whole run and /tmp/nx-lo.lock while a router is attached to lo;
# every process started here is stopped by PID, every pin dir removed.
# TARGET=wasm measures the Wasm path instead: every jar on its default tiers (nano answered by the
# Chicory nano pool), peers bare and inline (the data plane over an in-process tier) in the same
# rounds, each point at c=64 and at c=1 (the issue's two Wasm targets).
# BODY=<file> posts that JSON as every request instead of the short chat: a real client's request
# (bench/data/chat-tools.json: a system prompt, a question and six tool definitions, 3.2 KB) shows
# what the router's per-byte work (the kernel's scan, the parse, the forward) costs beside nginx.
# CONNS=<n> measures (and profiles) each point with n connections instead of 64 (CONNS=1: the
# single-connection latency path, where a per-request wake-up shows); warm-ups stay at c=64.
# PROFILE_DIR=<dir> profiles the measured point of each router and of the Java peer beside it (vertx-proxy,
# or inline for TARGET=wasm) with async-profiler (CPU, every 200 µs, Java, native and kernel frames,
# fetched from Maven Central on first use) into <dir>/router-<jar number>-round-<round>.collapsed
# (vertx-proxy-round-<round>, inline-round-<round>), the requests served meanwhile in a .requests file
# beside it: bench/profile-summary.py turns two of them into µs of CPU per request per frame (an A/B
# that the rate's noise cannot hide), bench/jfr-flame.py into a flame graph. Profiling costs the
# profiled point a few per cent of its rate.
# WAKES=1 prints, under each point, the proxy's threads that blocked and woke during the measured run,
# per request and by thread name (voluntary context switches; a sleep and a wake cost tens of µs of CPU
# on this VM): at CONNS=1, which threads a request wakes.
# JAVA_OPTS_<n>="<options>" starts the n-th router of each round with these JVM options, and
# CONFIG_<n>='"key": {...}' adds members to its config (e.g. '"metrics": {"tlbFlushes": false}'):
# the same jar twice with one of them set for router 2 is an A/B of that option. Routers count jar
# by jar and, with MODES of two modes, mode by mode within a jar.
# JFR_DIR=<dir> records each router's measured points with JFR (profile settings, from the end of
# its warm-up to its exit) into <dir>/router-<jar number>-round-<round>.jfr; bench/jfr-flame.py folds it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench   # wrk and nginx-light, which ./test.sh does not need

if [ -z "${NX_BENCH_LOCKED:-}" ]; then
  NX_BENCH_LOCKED=1 exec flock /tmp/nx-bench.lock "$0" "$@"
fi
[ $# -ge 2 ] || { echo "usage: $0 ROUNDS JAR..." >&2; exit 2; }
rounds=$1; shift
for jar in "$@"; do [ -f "$jar" ] || { echo "bench: no jar at $jar" >&2; exit 2; }; done
secs=${SECONDS_PER_POINT:-8}
conns=${CONNS:-64}
[[ "$conns" =~ ^[1-9][0-9]*$ ]] || { echo "bench: CONNS is a positive number of connections, not '$conns'" >&2; exit 2; }
modes=${MODES:-kernel}
for mode in $modes; do
  case $mode in kernel|user) ;; *) echo "bench: MODES holds kernel and/or user, not '$mode'" >&2; exit 2 ;; esac
done
warm=${WARM:-60}
transport=${TRANSPORT:-}
transport_field=""
[ -n "$transport" ] && transport_field=", \"transport\": \"$transport\""

[ -n "${JFR_DIR:-}" ] && mkdir -p "$JFR_DIR" && JFR_DIR=$(cd "$JFR_DIR" && pwd)
[ -n "${PROFILE_DIR:-}" ] && mkdir -p "$PROFILE_DIR" && PROFILE_DIR=$(cd "$PROFILE_DIR" && pwd)

source scripts/build-lib.sh
source bench/bench-lib.sh
cp=$(nx_bench_classpath io.nexuscore.bench.BareServer)
profiler=""
[ -n "${PROFILE_DIR:-}" ] && profiler=$(async_profiler)
profile_out="" # set while a profiled point runs under PROFILE_DIR: where its profile goes
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp" /sys/fs/bpf/nexuscore-jarab-$$-*
}
trap cleanup EXIT

body_lua="'{\"model\":\"bench\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello in five words.\"}]}'"
body_name="the short chat (84 B)"
if [ -n "${BODY:-}" ]; then
  [ -f "$BODY" ] || { echo "bench: no body file at $BODY" >&2; exit 2; }
  ! grep -q ']==]' "$BODY" || { echo "bench: $BODY holds ]==], which ends the Lua string it goes in" >&2; exit 2; }
  body_lua="[==[$(cat "$BODY")]==]"
  body_name="$BODY ($(wc -c < "$BODY") B)"
fi
printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = %s\n' "$body_lua" > "$tmp/post.lua"
target=${TARGET:-upstream}
case $target in upstream|wasm) ;; *) echo "bench: TARGET is upstream or wasm, not '$target'" >&2; exit 2 ;; esac
point() { # name port pid... (a forwarding target's own processes first, its upstream last)
  local name=$1 url="http://127.0.0.1:$2/v1/chat/completions"; shift 2
  local own=("$@"); [ $# -gt 1 ] && unset 'own[-1]' # preemptions: the proxy's, not its upstream's
  wrk -t1 -c64 -d3s -s "$tmp/post.lua" "$url" > /dev/null
  local before after p0 p1 w0 w1 prof_pid=""; before=$(cpu_split "$@"); p0=$(preemptions "${own[@]}")
  w0=$(wakes_by_thread "${own[@]}")
  if [ -n "$profile_out" ]; then # the profile covers the measured run from about its first second
    java -jar "$profiler" profiler -e cpu -i 200us -d $((secs - 1)) -o collapsed -f "$profile_out.collapsed" "$1" \
      > "$profile_out.log" 2>&1 &
    prof_pid=$!
  fi
  wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$tmp/post.lua" "$url" > "$tmp/wrk.out"
  after=$(cpu_split "$@"); p1=$(preemptions "${own[@]}"); w1=$(wakes_by_thread "${own[@]}")
  local n; n=$(awk '/requests in/ { print $1 }' "$tmp/wrk.out")
  if [ -n "$prof_pid" ]; then
    wait "$prof_pid" || { echo "bench: async-profiler failed:" >&2; cat "$profile_out.log" >&2; }
    # requests served while the profiler ran: the rate times its seconds
    awk -v s=$((secs - 1)) '/^Requests\/sec/ { printf "%d\n", $2 * s }' "$tmp/wrk.out" > "$profile_out.requests"
  fi
  printf "%-44s c=%-2s rps=%-7s p50=%-9s %s preempted_per_req=%.2f\n" "$name" "$conns" \
    "$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$tmp/wrk.out")" "$(awk '$1 == "50%" { print $2 }' "$tmp/wrk.out")" \
    "$(awk -v a="$before" -v b="$after" -v hz="$(getconf CLK_TCK)" -v n="$n" 'BEGIN {
       split(a, x, " "); split(b, y, " "); u = n ? (y[1] - x[1]) * 1e6 / hz / n : 0; s = n ? (y[2] - x[2]) * 1e6 / hz / n : 0
       printf "cpu_us_per_req=%.1f (user %.1f sys %.1f)", u + s, u, s }')" \
    "$(awk -v a="$p0" -v b="$p1" -v n="$n" 'BEGIN { print n ? (b - a) / n : 0 }')"
  [ -z "${WAKES:-}" ] || printf "  %s wakes per request by thread: %s\n" "$name" "$(wakes_per_request "$w0" "$w1" "$n")"
  # The Wasm target's second figure, unless the measured point was c=1 already (CONNS=1).
  [ "$target" = wasm ] && [ "$conns" != 1 ] && point_c1 "$name" "$url"
  return 0
}
point_c1() { # name url: one connection, P50 and rate (the Wasm target's second figure)
  wrk -t1 -c1 -d"${secs}s" --latency -s "$tmp/post.lua" "$2" > "$tmp/wrk1.out"
  printf "%-44s c=1  rps=%-7s p50=%s\n" "$1" "$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$tmp/wrk1.out")" \
    "$(awk '$1 == "50%" { print $2 }' "$tmp/wrk1.out")"
}

bare_port=$(free_port)
java -Dnexus.transport="${transport:-auto}" -cp "$cp" io.nexuscore.bench.BareServer "$bare_port" 2 > "$tmp/bare.log" 2>&1 &
bare_pid=$!; pids+=("$bare_pid"); wait_port "$bare_port" "$bare_pid"
if [ "$target" = upstream ]; then
  proxy_port=$(free_port)
  java -Dnexus.transport="${transport:-auto}" -cp "$cp" io.nexuscore.bench.VertxProxy "$proxy_port" "$bare_port" 2 > "$tmp/proxy.log" 2>&1 &
  proxy_pid=$!; pids+=("$proxy_pid"); wait_port "$proxy_port" "$proxy_pid"
  nginx_port=$(free_port); mkdir -p "$tmp/nginx"
  nginx_proxy_conf "$tmp/nginx" "$nginx_port" "$bare_port" 2
  nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" -g 'daemon off;' &
  nginx_pid=$!; pids+=("$nginx_pid"); wait_port "$nginx_port" "$nginx_pid"
  nginx_workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
  peer_ports=("$bare_port" "$proxy_port")
else
  inline_port=$(free_port)
  java -Dnexus.transport="${transport:-auto}" -cp "$cp" io.nexuscore.bench.InlineRouter "$inline_port" 2 > "$tmp/proxy.log" 2>&1 &
  inline_pid=$!; pids+=("$inline_pid"); wait_port "$inline_port" "$inline_pid"
  peer_ports=("$bare_port" "$inline_port")
fi
for port in "${peer_ports[@]}"; do
  wrk -t1 -c64 -d20s -s "$tmp/post.lua" "http://127.0.0.1:$port/v1/chat/completions" > /dev/null
done
tiers=""
for t in nano small large; do
  [ "$target" = wasm ] && break # the default tiers: nano and small on Chicory, large on wasmtime
  tiers+="${tiers:+, }\"$t\": {\"model\": \"nexus-$t\", \"instances\": 64, \"queueCapacity\": 4096,
    \"upstream\": {\"baseUrl\": \"http://127.0.0.1:$bare_port/v1\", \"model\": \"bare\", \"timeoutMs\": 10000}}"
done
tiers_field=""
[ -n "$tiers" ] && tiers_field=", \"tiers\": { $tiers }"
echo "# $(date -u +%FT%TZ), $(nproc) cores, $rounds rounds, ${warm}s warm-up per router, ${secs}s per point," \
  "transport ${transport:-auto (router: its default)}, body $body_name; $(head -1 "$tmp/proxy.log")"
for round in $(seq 1 "$rounds"); do
  point bare "$bare_port" "$bare_pid"
  if [ "$target" = upstream ]; then
    # shellcheck disable=SC2086
    point "nginx -> upstream" "$nginx_port" "$nginx_pid" $nginx_workers "$bare_pid"
    [ -n "${PROFILE_DIR:-}" ] && profile_out="$PROFILE_DIR/vertx-proxy-round-$round"
    point "vertx-proxy -> upstream" "$proxy_port" "$proxy_pid" "$bare_pid"
  else
    [ -n "${PROFILE_DIR:-}" ] && profile_out="$PROFILE_DIR/inline-round-$round"
    point "inline" "$inline_port" "$inline_pid"
  fi
  profile_out=""
  i=0
  for jar in "$@"; do
    for mode in $modes; do
      i=$((i + 1))
      data_port=$(free_port); control_port=$(free_port); pin_dir=/sys/fs/bpf/nexuscore-jarab-$$-$i
      config_var="CONFIG_$i"; extra_config=""
      [ -n "${!config_var:-}" ] && extra_config=", ${!config_var}"
      cat > "$tmp/router.json" <<JSON
{"dataPlane": {"host": "127.0.0.1", "port": $data_port, "instances": 2$transport_field},
 "control": {"port": $control_port, "stateFile": "$tmp/state-$i.json"},
 "kernel": {"mode": "$mode", "pinDir": "$pin_dir", "interfaces": ["lo"]}$tiers_field$extra_config}
JSON
      router_label="-> upstream"; upstream_pid=$bare_pid
      if [ "$target" = wasm ]; then router_label="(Wasm tiers)"; upstream_pid=""; fi
      (
        exec 9> /tmp/nx-lo.lock; flock 9
        jfr=()
        [ -n "${JFR_DIR:-}" ] && jfr=("-XX:StartFlightRecording=delay=${warm}s,filename=$JFR_DIR/router-$i-round-$round.jfr,settings=profile")
        opts_var="JAVA_OPTS_$i"
        # shellcheck disable=SC2086 # word splitting of the options is meant
        java ${!opts_var:-} "${jfr[@]}" -jar "$jar" --config "$tmp/router.json" > "$tmp/router-$i.log" 2>&1 &
        pid=$!
        trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$pin_dir"' EXIT
        wait_port "$data_port" "$pid" || { tail -20 "$tmp/router-$i.log" >&2; exit 1; }
        for _ in $(seq 1 100); do grep -q "data plane on" "$tmp/router-$i.log" && break; sleep 0.1; done
        grep -q "$mode mode" "$tmp/router-$i.log" || { echo "bench: $jar did not start in $mode mode" >&2; tail -20 "$tmp/router-$i.log" >&2; exit 1; }
        wrk -t1 -c64 -d"${warm}s" -s "$tmp/post.lua" "http://127.0.0.1:$data_port/v1/chat/completions" > /dev/null
        [ -n "${PROFILE_DIR:-}" ] && profile_out="$PROFILE_DIR/router-$i-round-$round"
        # shellcheck disable=SC2086
        point "router $i ($(basename "$jar"), $mode) $router_label" "$data_port" "$pid" $upstream_pid
      )
    done
  done
done
