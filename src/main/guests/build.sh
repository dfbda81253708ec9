#!/usr/bin/env bash
# Builds the reference tier guests (wasm32 reactor modules, see src/main/wit/nexus-tier.wit) into the
# directory given as $1: nano.wasm, small.wasm, large.wasm. Called by Maven (exec-maven-plugin).
# One C source, three builds: -DNX_TIER selects the guest's name and completion budget.
set -euo pipefail

out="${1:?usage: build.sh OUTPUT_DIR}"
src="$(cd "$(dirname "$0")" && pwd)"
cc="${WASM_CC:-clang-14}"

if ! command -v "$cc" >/dev/null; then
  echo "guests: $cc not found; run scripts/install-deps.sh (clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32)" >&2
  exit 1
fi

mkdir -p "$out"
tier=0
for name in nano small large; do
  # --import-memory: the host creates the memory with the tier's ceiling as its maximum.
  # --export=_initialize comes with the reactor model; no libc function is called, so no WASI import.
  # stack-size 64 KiB: the guest keeps little on the stack; the heap starts right above it.
  "$cc" --target=wasm32-wasi -O2 -mexec-model=reactor -std=c11 -Wall -Wextra -Werror \
    -DNX_TIER="$tier" \
    -Wl,--import-memory -Wl,-z,stack-size=65536 -Wl,--strip-debug \
    -o "$out/$name.wasm.tmp" "$src/nexus_guest.c"
  mv "$out/$name.wasm.tmp" "$out/$name.wasm"
  tier=$((tier + 1))
done
