#!/usr/bin/env bash
# Makes a Docker engine answer on this machine (CI has none running): installs Debian's docker.io
# when dockerd is missing, starts `dockerd` in the background when no engine answers, and waits for
# it. Writes the PID of a dockerd it started to $NEXUSCORE_DOCKERD_PIDFILE (default
# /run/nexuscore-dockerd.pid) so whoever called it can stop exactly that process:
#   scripts/docker-engine.sh          # ensure an engine answers
#   scripts/docker-engine.sh stop     # stop the dockerd this script started (by its PID), if any
# Uses Debian's /usr/bin/docker: a docker CLI in /usr/local/bin may shadow it and lack BuildKit.
set -euo pipefail

pidfile="${NEXUSCORE_DOCKERD_PIDFILE:-/run/nexuscore-dockerd.pid}"
logfile="${NEXUSCORE_DOCKERD_LOG:-/var/log/nexuscore-dockerd.log}"
docker_cli=/usr/bin/docker

engine_answers() {
  [ -x "$docker_cli" ] && timeout 10 "$docker_cli" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

if [ "${1:-}" = "stop" ]; then
  if [ -f "$pidfile" ]; then
    pid="$(cat "$pidfile")"
    if kill -0 "$pid" 2>/dev/null && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "dockerd" ]; then
      kill "$pid"
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" || true
      echo "docker-engine: stopped dockerd (pid $pid)"
    fi
    rm -f "$pidfile"
  fi
  exit 0
fi

if engine_answers; then
  echo "docker-engine: an engine already answers ($("$docker_cli" version --format '{{.Server.Version}}'))"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "docker-engine: no Docker engine answers and this is not root: cannot install or start one" >&2
  exit 1
fi

if ! command -v dockerd >/dev/null 2>&1 || [ ! -x "$docker_cli" ]; then
  echo "docker-engine: installing docker.io (Debian)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends docker.io
fi

# BuildKit needs the buildx plugin on newer CLIs; Debian's docker.io 20.10 has the builder built in.
echo "docker-engine: starting dockerd (log: $logfile)"
mkdir -p "$(dirname "$pidfile")" "$(dirname "$logfile")"
nohup dockerd >"$logfile" 2>&1 &
echo $! >"$pidfile"

for _ in $(seq 1 60); do
  if engine_answers; then
    echo "docker-engine: dockerd $(cat "$pidfile") answers ($("$docker_cli" version --format '{{.Server.Version}}'))"
    exit 0
  fi
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "docker-engine: dockerd exited; last log lines:" >&2
    tail -n 30 "$logfile" >&2
    rm -f "$pidfile"
    exit 1
  fi
  sleep 1
done
echo "docker-engine: dockerd did not answer within 60 s; last log lines:" >&2
tail -n 30 "$logfile" >&2
exit 1
