#!/usr/bin/env bash
# Container entry point: mounts bpffs when /sys/fs/bpf is not one (the compose file bind-mounts the
# host's, which keeps pinned maps across container restarts), then execs the router in the
# foreground (as PID 1) so SIGTERM reaches it and it detaches its programs on the way out.
# Arguments go to the router (e.g. --config FILE); NEXUSCORE_CONFIG works too.
set -euo pipefail
if ! mountpoint -q /sys/fs/bpf 2>/dev/null; then
  mkdir -p /sys/fs/bpf 2>/dev/null || true
  mount -t bpf -o mode=0700 bpf /sys/fs/bpf 2>/dev/null \
    || echo "entrypoint: /sys/fs/bpf is not bpffs and cannot be mounted: the router falls back to user space (kernel.mode auto)" >&2
fi
# Docker mounts /proc/sys read-only; the router sets net.ipv4.tcp_fwmark_accept (per network
# namespace: the container's own, or the host's under host networking, as a native router would).
if grep -q ' /proc/sys proc ro' /proc/mounts; then
  mount -o remount,rw,bind /proc/sys 2>/dev/null \
    || echo "entrypoint: /proc/sys is read-only and cannot be remounted: the router falls back to user space (kernel.mode auto)" >&2
fi
exec java ${JAVA_OPTS:-} -jar /opt/nexuscore/nexuscore.jar "$@"
