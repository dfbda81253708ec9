#!/usr/bin/env bash
# Runs the NexusCore router in the foreground on the embedded default configuration (arguments go
# to the router, e.g. --config FILE). Installs the Debian packages the build needs, mounts bpffs
# when root, and builds the jar when it is missing or older than the sources.
set -euo pipefail
cd "$(dirname "$0")"

bash scripts/install-deps.sh
if [ "$(id -u)" -eq 0 ]; then
  bash scripts/mount-bpffs.sh
fi

source scripts/build-lib.sh
jar=$(nx_fresh_jar)

exec java -jar "$jar" "$@"
