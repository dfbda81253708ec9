#!/usr/bin/env bash
# Stops the router ./start.sh started (by the PID in its PID file, nothing else), then removes what
# that router leaves behind: the pinned maps (kept on purpose: thresholds survive restarts) and its
# sysctl reference. This build holds its XDP and TC programs by bpf_links, which go with the process
# however it ends; XDP programs and clsact filters attached the old way (netlink, by builds before
# 2026-12-05) that a crashed router left are detached here (only programs that use the maps pinned
# in ITS pin directory, so another router's are never touched). Settings: see scripts/lib.sh (NEXUSCORE_CONFIG, NEXUSCORE_RUN_DIR).
set -euo pipefail
source "$(dirname "$0")/scripts/lib.sh"

pid="$(nx_router_pid)"
if [ -n "$pid" ]; then
  echo "cleanup: stopping the router (pid $pid)"
  kill -TERM "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "cleanup: the router did not stop within 30 s; killing it (pid $pid)" >&2
    kill -KILL "$pid" || true
    sleep 0.5
  fi
else
  echo "cleanup: no running router recorded in $NX_PID_FILE"
fi
rm -f "$NX_PID_FILE"

case "$NX_PIN_DIR" in
  /sys/fs/bpf/?*) ;;
  *) echo "cleanup: pin dir '$NX_PIN_DIR' is not under /sys/fs/bpf; leaving it" >&2; exit 1 ;;
esac

# Without our pins there is no way to tell our programs from another router's: touch nothing.
[ -d "$NX_PIN_DIR" ] || { rm -f "$NX_RUN_DIR/tcp_fwmark_accept.before"; echo "cleanup: nothing pinned at $NX_PIN_DIR"; exit 0; }

# The id of our score_thresholds map: every program of ours uses it.
our_map_id=""
if [ -e "$NX_PIN_DIR/score_thresholds" ]; then
  our_map_id="$(bpftool -j map show pinned "$NX_PIN_DIR/score_thresholds" | jq -r '.id')"
fi

leftovers=0
for dev in $NX_INTERFACES; do
  [ -e "/sys/class/net/$dev" ] && [ -n "$our_map_id" ] || continue
  for id in $(nx_attached_progs "$dev" xdp "$NX_XDP_PROGRAM"); do
    nx_prog_uses_map "$id" "$our_map_id" || continue
    mode="$(bpftool -j net show dev "$dev" | jq -r --argjson i "$id" '.[0].xdp[] | select(.id == $i) | .mode')"
    case "$mode" in generic) flag=xdpgeneric ;; driver) flag=xdpdrv ;; offload) flag=xdpoffload ;; *) flag=xdp ;; esac
    ip link set dev "$dev" "$flag" off
    echo "cleanup: detached leftover XDP program $id ($mode) from $dev"
    leftovers=$((leftovers + 1))
  done
  for id in $(nx_attached_progs "$dev" tc "$NX_TC_PROGRAM"); do
    nx_prog_uses_map "$id" "$our_map_id" || continue
    kind="$(bpftool -j net show dev "$dev" | jq -r --argjson i "$id" '.[0].tc[] | select(.id == $i) | .kind')"
    # The router attaches at handle 0x4e58 ("NX"), priority 1 (io.nexuscore.kernel.InterfaceLink): delete
    # that one filter, never every filter at priority 1 (another tool's may share it).
    tc filter del dev "$dev" "${kind#clsact/}" pref 1 handle 0x4e58 bpf
    echo "cleanup: detached leftover TC program $id ($kind) from $dev"
    leftovers=$((leftovers + 1))
  done
done
# A router that died attached left its reference on net.ipv4.tcp_fwmark_accept in its pin directory
# (io.nexuscore.kernel.SharedSysctl: a directory sysctl_..._was_<value>); the last reference restores.
for marker in "$NX_PIN_DIR"/sysctl_net_ipv4_tcp_fwmark_accept_was_*; do
  [ -d "$marker" ] || continue
  rmdir "$marker"
  if [ -z "$(find /sys/fs/bpf -maxdepth 4 -type d -name 'sysctl_net_ipv4_tcp_fwmark_accept_was_*' -print -quit)" ]; then
    echo "${marker##*_was_}" >/proc/sys/net/ipv4/tcp_fwmark_accept
    echo "cleanup: restored net.ipv4.tcp_fwmark_accept=${marker##*_was_} (no other NexusCore uses it)"
  fi
done
rm -f "$NX_RUN_DIR/tcp_fwmark_accept.before"
[ "$leftovers" -eq 0 ] && echo "cleanup: no programs of this router attached on: $NX_INTERFACES"

# Every BPF object pinned in the router's directory: the maps it names, and any a newer build adds.
removed=0
for f in "$NX_PIN_DIR"/*; do
  [ -e "$f" ] || continue
  if bpftool map show pinned "$f" >/dev/null 2>&1 || bpftool prog show pinned "$f" >/dev/null 2>&1; then
    rm -f "$f"
    removed=$((removed + 1))
  fi
done
if [ -d "$NX_PIN_DIR" ]; then
  rmdir "$NX_PIN_DIR" 2>/dev/null || echo "cleanup: $NX_PIN_DIR holds files that are not the router's; left in place" >&2
fi
echo "cleanup: removed $removed pinned objects under $NX_PIN_DIR"
