#!/usr/bin/env bash
# Mounts the BPF filesystem at /sys/fs/bpf when it is not mounted (it is not on every machine).
set -euo pipefail
if ! mountpoint -q /sys/fs/bpf; then
  mount -t bpf bpf /sys/fs/bpf
  echo "mount-bpffs: mounted bpffs at /sys/fs/bpf"
fi
