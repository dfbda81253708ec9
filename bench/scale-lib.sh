# Helpers shared by the scale benchmarks (bench/scale-*.sh). Sourced after bench-lib.sh and
# build-lib.sh, not run. The sourcing script sets `tmp` (a scratch dir it removes) and the array
# `pids`; every process started here is appended to `pids`, so the script's exit trap stops exactly
# these, by PID.

# scale_stop PID...: TERM, then wait until each is gone (a kernel-mode router detaches on the way out).
scale_stop() {
  for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
  for pid in "$@"; do
    wait "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}

# scale_cleanup: the exit trap: stops what was started, removes the pin dir and scratch dir.
scale_cleanup() {
  scale_stop "${pids[@]}"
  [ -n "${scale_pin_dir:-}" ] && rm -rf "$scale_pin_dir"
  rm -rf "$tmp"
}

# scale_lo_lock MODE: in kernel mode, holds /tmp/nx-lo.lock (fd 9) until the script exits, as every
# script that attaches to lo does.
scale_lo_lock() {
  if [ "$1" = kernel ]; then
    exec 9> /tmp/nx-lo.lock
    flock 9
  fi
}

# scale_upstream_tiers PORT[,PORT...] INSTANCES: the "tiers" section with nano, small and large all
# forwarding to the upstreams on 127.0.0.1:PORT..., INSTANCES connections each per endpoint (shared
# out between the event loops), a 60 s whole-request timeout.
scale_upstream_tiers() {
  local t out="" urls="" port
  for port in ${1//,/ }; do urls+="${urls:+, }\"http://127.0.0.1:$port/v1\""; done
  for t in nano small large; do
    out+="${out:+, }\"$t\": {\"model\": \"nexus-$t\", \"instances\": $2, \"queueCapacity\": 4096,
      \"upstream\": {\"baseUrls\": [$urls], \"model\": \"bare\", \"timeoutMs\": 60000}}"
  done
  echo "\"tiers\": { $out }"
}

# scale_start_router NAME MODE DATAPLANE_EXTRA TIERS [JVM_FLAGS...]: writes a config (data plane on a
# free loopback port, DATAPLANE_EXTRA added to its section: e.g. "\"headerTimeoutMs\": 600000"),
# starts the jar, waits until it serves in MODE, and sets router_pid and router_port.
scale_start_router() {
  local name=$1 mode=$2 extra=$3 tiers=$4; shift 4
  local control_port
  router_port=$(free_port); control_port=$(free_port)
  scale_pin_dir=/sys/fs/bpf/nexuscore-scale-$$-$name
  cat > "$tmp/$name.json" <<JSON
{
  "dataPlane": {"host": "127.0.0.1", "port": $router_port, "instances": ${INSTANCES:-$(nproc)},
                "transport": "${TRANSPORT:-auto}"${extra:+, $extra}},
  "control": {"port": $control_port, "stateFile": "$tmp/$name-state.json"},
  "kernel": {"mode": "$mode", "pinDir": "$scale_pin_dir", "interfaces": ["lo"]},
  $tiers
}
JSON
  java "$@" -jar "$jar" --config "$tmp/$name.json" > "$tmp/$name.log" 2>&1 &
  router_pid=$!; pids+=("$router_pid")
  wait_port "$router_port" "$router_pid" || { tail -20 "$tmp/$name.log" >&2; return 1; }
  for _ in $(seq 1 100); do grep -q "data plane on" "$tmp/$name.log" && break; sleep 0.1; done
  grep -q "$mode mode" "$tmp/$name.log" || { echo "bench: $name did not start in $mode mode:" >&2; cat "$tmp/$name.log" >&2; return 1; }
}

# scale_rss_kb PID: the process's resident set, KiB.
scale_rss_kb() {
  awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# scale_load_line: "load average A B C" now (the machine is shared: every figure says how busy it was).
scale_load_line() {
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# scale_router_warnings: how many warning and error lines the router logged, and the first distinct
# ones (a refused stream or a dropped connection says why there).
scale_router_warnings() {
  local log="$tmp/router.log" n
  n=$(grep -cE 'WARN|WARNING|ERROR|SEVERE' "$log" || true)
  echo "# router log: $n warning/error lines"
  grep -E 'WARN|WARNING|ERROR|SEVERE' -A1 "$log" | sed 's/^[0-9TZ:.-]* //' | sort | uniq -c | sort -rn | head -5 | sed 's/^/#   /' || true
}
