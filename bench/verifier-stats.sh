#!/usr/bin/env bash
# The verifier's figures for the classifier object (root): per program, the stack depth of each frame
# and the instructions the verifier processed against its 1,000,000 limit; then the BPF code size of
# each function in the object (what a cold instruction cache pays for under real traffic).
# Usage: bench/verifier-stats.sh [OBJECT]   (default: the build's target/classes/bpf/nexus_classify.bpf.o)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "verifier-stats: needs root (loads BPF programs)" >&2; exit 1; fi
bash scripts/mount-bpffs.sh
object=${1:-target/classes/bpf/nexus_classify.bpf.o}
if [ $# -eq 0 ]; then bash src/main/bpf/build.sh target/classes/bpf >/dev/null; fi
mkdir -p target/bench-bpf
gcc -O2 -Wall -Werror -o target/bench-bpf/verifier-stats bench/verifier/verifier-stats.c -lbpf
pin_root=/sys/fs/bpf/nxverifier-$$-$RANDOM
mkdir "$pin_root"
trap 'rm -rf "$pin_root"' EXIT
target/bench-bpf/verifier-stats "$object" "$pin_root" | grep -E '^== |^stack depth|^processed'
echo "BPF code per function (bytes; 8 per instruction):"
llvm-nm -S --size-sort "$object" | awk '$3 ~ /^[tT]$/ && $4 !~ /^LBB/ { printf "  %-22s %6d\n", $4, ("0x" $2) + 0 }'
