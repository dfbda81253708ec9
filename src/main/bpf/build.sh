#!/usr/bin/env bash
# Compiles every src/main/bpf/*.bpf.c into a CO-RE BPF object in the directory given as $1
# (Maven packs it into the jar under bpf/). vmlinux.h is generated from the running kernel's BTF
# into target/bpf-include, never committed.
set -euo pipefail

out="${1:?usage: build.sh OUTPUT_DIR}"
src="$(cd "$(dirname "$0")" && pwd)"
project="$(cd "$src/../../.." && pwd)"
include="$project/target/bpf-include"
mkdir -p "$out" "$include"

for tool in clang bpftool; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (run scripts/install-deps.sh)" >&2; exit 1; }
done
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "build.sh: /sys/kernel/btf/vmlinux is missing: this kernel has no BTF (CONFIG_DEBUG_INFO_BTF)" >&2
  exit 1
fi
if [ ! -s "$include/vmlinux.h" ] || [ /sys/kernel/btf/vmlinux -nt "$include/vmlinux.h" ]; then
  bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$include/vmlinux.h.tmp"
  mv "$include/vmlinux.h.tmp" "$include/vmlinux.h"
fi

for c in "$src"/*.bpf.c; do
  obj="$out/$(basename "${c%.c}").o"
  clang -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror \
    -I"$include" -I"$src" -c "$c" -o "$obj.tmp"
  mv "$obj.tmp" "$obj"
done
