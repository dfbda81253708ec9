#!/usr/bin/env bash
# Runs the whole NexusCore test suite: installs the Debian packages the build needs (when root),
# mounts bpffs, then builds (eBPF objects, Wasm guests, Java) and runs every test with Maven.
# Kernel tests need root; outside CI they skip with a stated reason, with CI=true they must run.
set -euo pipefail
cd "$(dirname "$0")"

bash scripts/install-deps.sh
if [ "$(id -u)" -eq 0 ]; then
  bash scripts/mount-bpffs.sh
fi
exec mvn -B -ntp verify "$@"
