#!/usr/bin/env bash
# Builds the reference tier guests (wasm32 reactor modules, see src/main/wit/nexus-tier.wit) into the
# directory given as $1: nano.wasm, small.wasm, large.wasm. Called by Maven (exec-maven-plugin).
# $2 is the jtokkit jar whose cl100k_base ranks the guests embed (Cl100kTables.java), $3 a work dir.
# One C source, three builds: -DNX_TIER selects the guest's name and completion budget.
set -euo pipefail

out="${1:?usage: build.sh OUTPUT_DIR JTOKKIT_JAR WORK_DIR}"
jar="${2:?usage: build.sh OUTPUT_DIR JTOKKIT_JAR WORK_DIR (the jtokkit jar holds the cl100k_base ranks)}"
work="${3:?usage: build.sh OUTPUT_DIR JTOKKIT_JAR WORK_DIR}"
src="$(cd "$(dirname "$0")" && pwd)"
cc="${WASM_CC:-clang-14}"

if ! command -v "$cc" >/dev/null; then
  echo "guests: $cc not found; run scripts/install-deps.sh (clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32)" >&2
  exit 1
fi
if [[ ! -f "$jar" ]]; then
  echo "guests: $jar not found; the cl100k_base table is generated from it (mvn dependency:resolve, or go online once)" >&2
  exit 1
fi

mkdir -p "$out" "$work"
cflags=(--target=wasm32-wasi -O2 -std=c11 -Wall -Wextra -Werror)

# The cl100k tables (~1.3 MB of data in the guest: token bytes and lengths, a hash index, Unicode letter/number ranges)
# are generated and compiled once, and again only when the jar or the generator changes.
tables="$work/cl100k_tables.c"
if [[ ! -f "$tables" || ! -f "$work/cl100k_layout.h" || "$jar" -nt "$tables" || "$src/Cl100kTables.java" -nt "$tables" ]]; then
  java "$src/Cl100kTables.java" "$jar" "$tables"
fi
if [[ ! -f "$work/cl100k_tables.o" || "$tables" -nt "$work/cl100k_tables.o" ]]; then
  "$cc" "${cflags[@]}" -c -o "$work/cl100k_tables.o" "$tables"
fi
"$cc" "${cflags[@]}" -I"$work" -c -o "$work/cl100k.o" "$src/cl100k.c"

tier=0
for name in nano small large; do
  # --import-memory: the host creates the memory with the tier's ceiling as its maximum.
  # --export=_initialize comes with the reactor model; no libc function is called, so no WASI import.
  # stack-size 64 KiB: the guest keeps little on the stack; the heap starts right above it.
  "$cc" "${cflags[@]}" -mexec-model=reactor \
    -DNX_TIER="$tier" \
    -Wl,--import-memory -Wl,-z,stack-size=65536 -Wl,--strip-debug \
    -o "$out/$name.wasm.tmp" "$src/nexus_guest.c" "$work/cl100k.o" "$work/cl100k_tables.o"
  mv "$out/$name.wasm.tmp" "$out/$name.wasm"
  tier=$((tier + 1))
done
