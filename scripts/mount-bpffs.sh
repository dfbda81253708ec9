#!/usr/bin/env bash
# Mounts the BPF filesystem at /sys/fs/bpf when it is not mounted (it is not on every machine),
# mode 0700: the kernel's default (1777) lets any local user create the router's pin directory
# first and swap its pins. Keep the options equal to BpfFs.MOUNT_OPTIONS (BpfFsTest checks).
set -euo pipefail
if ! mountpoint -q /sys/fs/bpf; then
  mount -t bpf -o mode=0700 bpf /sys/fs/bpf
  echo "mount-bpffs: mounted bpffs at /sys/fs/bpf (mode 0700)"
fi
