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

jar=$(ls target/nexuscore-*.jar 2>/dev/null | grep -v -- '-original' | head -1 || true)
if [ -z "$jar" ] || [ -n "$(find pom.xml src -type f -newer "$jar" -print -quit)" ]; then
  echo "run: building the jar (mvn package -DskipTests)" >&2
  mvn -B -q -ntp package -DskipTests
  jar=$(ls target/nexuscore-*.jar | grep -v -- '-original' | head -1)
fi

exec java -jar "$jar" "$@"
