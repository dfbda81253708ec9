#!/usr/bin/env bash
# Builds the local base image local/debian:bookworm from Debian packages, for machines that reach
# the Debian mirror but no container registry: debootstrap --variant=minbase into a temp dir, using
# the mirror this machine's apt uses, then `docker import`. Idempotent: does nothing when the image
# exists. Usage: scripts/docker-base-image.sh [image-name]
set -euo pipefail

image="${1:-local/debian:bookworm}"
suite=bookworm
docker_cli=/usr/bin/docker   # Debian's CLI; /usr/local/bin/docker may shadow it
[ -x "$docker_cli" ] || docker_cli="$(command -v docker)"

if "$docker_cli" image inspect "$image" >/dev/null 2>&1; then
  echo "docker-base-image: $image exists"
  exit 0
fi

# The first Debian mirror apt is configured with (deb822 .sources or one-line .list files).
mirror="$(
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}'
  } | grep -v -- '-security' | grep -m1 '/debian/\?$' || true)"
mirror="${mirror:-http://deb.debian.org/debian}"

if ! command -v debootstrap >/dev/null 2>&1; then
  echo "docker-base-image: installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap \
    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap; }
fi

root="$(mktemp -d /tmp/nexuscore-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "docker-base-image: debootstrap --variant=minbase $suite from $mirror"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 \
  || { tail -n 30 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
# Keep images small and apt quiet inside them, as the official image does.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | "$docker_cli" import -c 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "docker-base-image: imported $image"
