# Shared settings for the root scripts (start, verify, demo, stress, cleanup). Sourced, not run.
# The router's ports and pin directory come from the embedded defaults, overlaid by the file named
# in NEXUSCORE_CONFIG (the same file the router reads), so a router on other ports with its own pin
# directory can run beside the default one. NEXUSCORE_RUN_DIR moves the PID and log files.

NX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$NX_ROOT/scripts/build-lib.sh"
NX_RUN_DIR="${NEXUSCORE_RUN_DIR:-$NX_ROOT/run}"
NX_PID_FILE="$NX_RUN_DIR/router.pid"
NX_LOG_FILE="$NX_RUN_DIR/router.log"
# Map names the router pins (io.nexuscore.kernel.KernelDataPath.PINNED_MAPS); verify.sh checks each.
NX_PINNED_MAPS=(routing_decisions routing_decisions6 verdict_slots verdict_slots6 score_thresholds tier_counters tenant_policy tc_chain
                token_model latency_ringbuf recalibration_events calibration_events adaptive_settings adaptive_stats
                adaptive_timer tenant_limits tenant_windows)
NX_XDP_PROGRAM=nexus_classify
NX_TC_PROGRAM=nexus_tc_classify

# nx_config JQ_PATH DEFAULT: a value from $NEXUSCORE_CONFIG, or the default.
nx_config() {
  local value=""
  if [ -n "${NEXUSCORE_CONFIG:-}" ]; then
    [ -r "$NEXUSCORE_CONFIG" ] || { echo "NEXUSCORE_CONFIG=$NEXUSCORE_CONFIG is not readable" >&2; return 1; }
    command -v jq >/dev/null || { echo "jq is needed to read NEXUSCORE_CONFIG (apt-get install jq)" >&2; return 1; }
    value="$(jq -r "$1 // empty | if type == \"array\" then join(\" \") else . end" "$NEXUSCORE_CONFIG")"
  fi
  echo "${value:-$2}"
}

NX_DATA_PORT="$(nx_config .dataPlane.port 8080)"
NX_CONTROL_HOST="$(nx_config .control.host 127.0.0.1)"
NX_CONTROL_PORT="$(nx_config .control.port 8081)"
NX_PIN_DIR="$(nx_config .kernel.pinDir /sys/fs/bpf/nexuscore)"
NX_INTERFACES="$(nx_config .kernel.interfaces lo)"
NX_DATA_URL="${NEXUSCORE_DATA_URL:-http://127.0.0.1:$NX_DATA_PORT}"
NX_CONTROL_URL="${NEXUSCORE_CONTROL_URL:-http://$NX_CONTROL_HOST:$NX_CONTROL_PORT}"

# nx_router_pid: the PID in the PID file when that process is alive and is our router, else nothing.
nx_router_pid() {
  [ -f "$NX_PID_FILE" ] || return 0
  local pid
  pid="$(cat "$NX_PID_FILE")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q nexuscore; then
    echo "$pid"
  fi
}

# nx_attached_progs DEV HOOK NAME: ids of programs on DEV's HOOK (xdp or tc) whose name is NAME.
# bpftool 7.1 leaves XDP entries unnamed and cuts TC names, so names come from `prog show` (full
# from BTF when the program has it, else the kernel's 15 characters).
nx_attached_progs() {
  local id
  for id in $(bpftool -j net show dev "$1" 2>/dev/null | jq -r --arg h "$2" '.[0][$h][]? | .id'); do
    case "$(bpftool -j prog show id "$id" 2>/dev/null | jq -r '.name')" in
      "$3"|"${3:0:15}") echo "$id" ;;
    esac
  done
}

# nx_tcx_prog DEV NAME HEALTH_JSON: the id of the program named NAME that the router's /healthz reports
# at DEV's tcx ingress, when a bpf_link on the host holds it ("" otherwise).
nx_tcx_prog() {
  local id
  id="$(printf '%s' "$3" | jq -r --arg d "$1" '.attachment.interfaces[]? | select(.interface == $d) | .tc_prog_id')"
  case "$id" in ''|0|null) return 0 ;; esac
  bpftool -j link show 2>/dev/null | jq -e --argjson i "$id" 'any(.[]; .prog_id == $i)' >/dev/null || return 0
  case "$(bpftool -j prog show id "$id" 2>/dev/null | jq -r '.name')" in
    "$2"|"${2:0:15}") echo "$id" ;;
  esac
}

# nx_prog_uses_map PROG_ID MAP_ID: the program references the map.
nx_prog_uses_map() {
  bpftool -j prog show id "$1" 2>/dev/null | jq -e --argjson m "$2" '(.map_ids // []) | index($m) != null' >/dev/null
}
