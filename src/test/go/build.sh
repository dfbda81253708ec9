#!/usr/bin/env bash
# Builds the Go clients of the tests and benchmarks (standard library only, so offline) into
# DIR/go/bin, with the build cache and GOPATH under DIR/go so nothing is written to $HOME:
#   chatclient: net/http posting chat requests (RealClientVerdictsTest, bench/routing-eval.sh --client go)
# Needs the go command (Debian golang-go; scripts/install-deps.sh installs it). Prints the binary's path.
# Usage: src/test/go/build.sh DIR   (the tests and routing-eval.sh pass target)
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
command -v go >/dev/null || { echo "go-build: the go command is missing (Debian golang-go; run scripts/install-deps.sh)" >&2; exit 1; }
src="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$1/go/bin"
out="$(cd "$1" && pwd)/go"

# GOENV=off: no user config file; GOTOOLCHAIN=local and GOPROXY=off: never fetch a toolchain or a
# module (a newer go would otherwise honour a go line above its own version by downloading);
# CGO_ENABLED=0: a static binary that needs no C compiler. XDG_CONFIG_HOME keeps a newer go's
# telemetry counters under DIR too.
export GOENV=off GOTOOLCHAIN=local GOPROXY=off CGO_ENABLED=0 \
  GOCACHE="$out/cache" GOPATH="$out/path" XDG_CONFIG_HOME="$out/config"
(cd "$src/chatclient" && go build -trimpath -o "$out/bin/chatclient" .)
echo "$out/bin/chatclient"
