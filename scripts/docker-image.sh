#!/usr/bin/env bash
# Builds the NexusCore image (default tag nexuscore:local) from docker/Dockerfile with BuildKit and
# host networking (the build stage fetches Debian packages and Maven dependencies). The base is
# local/debian:bookworm when that image exists (scripts/docker-base-image.sh builds it where no
# registry is reachable), else the official debian:bookworm; override with NEXUSCORE_DOCKER_BASE.
# The host's extra CA certificates go into the build stage (see docker/ca-certificates/README.md).
# Usage: scripts/docker-image.sh [tag]
set -euo pipefail
cd "$(dirname "$0")/.."

tag="${1:-nexuscore:local}"
docker_cli=/usr/bin/docker   # Debian's CLI: a /usr/local/bin/docker may shadow it and lack BuildKit
[ -x "$docker_cli" ] || docker_cli="$(command -v docker)"

base="${NEXUSCORE_DOCKER_BASE:-}"
if [ -z "$base" ]; then
  if "$docker_cli" image inspect local/debian:bookworm >/dev/null 2>&1; then
    base=local/debian:bookworm
  else
    base=debian:bookworm
  fi
fi

find docker/ca-certificates -name '*.crt' -delete
for crt in /usr/local/share/ca-certificates/*.crt; do
  [ -f "$crt" ] && cp "$crt" docker/ca-certificates/
done

echo "docker-image: building $tag on $base"
DOCKER_BUILDKIT=1 "$docker_cli" build --network host --build-arg BASE="$base" \
  -f docker/Dockerfile -t "$tag" .
