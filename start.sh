#!/usr/bin/env bash
# Starts the NexusCore router in the background and returns once it is healthy.
# - builds the jar when it is missing or older than the sources (mvn package -DskipTests)
# - as root: installs missing Debian packages (scripts/install-deps.sh) and mounts bpffs; the router
#   then loads XDP+TC (kernel mode). Not root: the router runs in user-space mode, and says so.
# - PID file and log under ./run (NEXUSCORE_RUN_DIR); config: embedded defaults, overlaid by
#   NEXUSCORE_CONFIG when set; JVM options: JAVA_OPTS.
# - waits up to NEXUSCORE_START_TIMEOUT seconds (default 90) for GET /healthz; on failure prints the
#   log tail and exits non-zero.
# Stop it with ./cleanup.sh.
set -euo pipefail
source "$(dirname "$0")/scripts/lib.sh"
cd "$NX_ROOT"

timeout_s="${NEXUSCORE_START_TIMEOUT:-90}"
root=false
[ "$(id -u)" -eq 0 ] && root=true

if pid="$(nx_router_pid)" && [ -n "$pid" ]; then
  echo "start: the router is already running (pid $pid, $NX_PID_FILE); ./cleanup.sh stops it"
  exit 0
fi

if $root; then
  bash scripts/install-deps.sh
  bash scripts/mount-bpffs.sh
else
  bash scripts/install-deps.sh || echo "start: not root, continuing without the missing packages" >&2
fi

jar="$(nx_fresh_jar)"
[ -f "$jar" ] || { echo "start: no router jar at '$jar'" >&2; exit 1; }

mkdir -p "$NX_RUN_DIR"
# The router sets net.ipv4.tcp_fwmark_accept=1; the last NexusCore to stop restores it (a reference
# in the pin directory, which cleanup.sh also drops when the router died without doing so).
if ! $root; then
  echo "start: not root: no eBPF privileges, the router runs in user-space mode (the Java scorer classifies)"
fi
echo "start: java -jar $jar${NEXUSCORE_CONFIG:+ (NEXUSCORE_CONFIG=$NEXUSCORE_CONFIG)}, log $NX_LOG_FILE"
# stdin/stdout/stderr detached so a caller waiting on this script's output does not wait on the router.
# shellcheck disable=SC2086
nohup java ${JAVA_OPTS:-} -jar "$jar" </dev/null >"$NX_LOG_FILE" 2>&1 &
pid=$!
echo "$pid" >"$NX_PID_FILE"

deadline=$((SECONDS + timeout_s))
health=""
while [ $SECONDS -lt $deadline ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "start: the router exited during start-up; last log lines:" >&2
    tail -n 40 "$NX_LOG_FILE" >&2
    rm -f "$NX_PID_FILE"
    exit 1
  fi
  if health="$(curl -fsS --max-time 2 "$NX_CONTROL_URL/healthz" 2>/dev/null)"; then
    break
  fi
  health=""
  sleep 0.5
done
if [ -z "$health" ]; then
  echo "start: no answer from $NX_CONTROL_URL/healthz within ${timeout_s} s; last log lines:" >&2
  tail -n 40 "$NX_LOG_FILE" >&2
  echo "start: the router (pid $pid) is left running for inspection; ./cleanup.sh stops it" >&2
  exit 1
fi

mode="$(printf '%s' "$health" | sed -n 's/.*"mode" *: *"\([a-z]*\)".*/\1/p')"
echo "start: router running, pid $pid, data plane $NX_DATA_URL, control plane $NX_CONTROL_URL"
echo "start: mode: ${mode:-unknown} ($health)"
if [ "$mode" = "user" ]; then
  reason="$(printf '%s' "$health" | sed -n 's/.*"reason" *: *"\([^"]*\)".*/\1/p')"
  if $root; then
    echo "start: user-space mode (${reason:-see $NX_LOG_FILE}): the Java scorer classifies every request"
  else
    echo "start: user-space mode because this is not root (XDP/TC need CAP_BPF, CAP_NET_ADMIN): the Java scorer classifies every request"
  fi
fi
