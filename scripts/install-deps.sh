#!/usr/bin/env bash
# Installs the Debian packages NexusCore needs to build and test: the eBPF toolchain (clang, llvm,
# libbpf, bpftool), the Wasm guest toolchain (clang-14 for wasm32-wasi, lld, wasi-libc, the wasm32
# compiler runtime) and the tools the tests drive (iproute2 for veth/netns, curl, promtool and the
# Python Prometheus text parser for the /metrics test, headless Chromium and chromium-driver for the
# dashboard's browser test, npx for the OpenAPI lint, node and python3-venv for the official
# OpenAI/Anthropic SDKs the API tests drive: scripts/install-sdks.sh installs the SDKs; golang-go for
# the Go net/http client, src/test/go). With --bench it adds the benchmarks' own
# tools (wrk and nginx-light for bench/dataplane-bench.sh and bench/proxy-floor-bench.sh).
#
# Idempotent: does nothing when every package is present. Installing needs root. Unprivileged, a
# missing build/test package is an error (the build cannot go on without it); a missing bench-only
# package is only reported, so ./test.sh and ./run.sh work for a user without the bench tools.
set -euo pipefail

bench=false
for arg in "$@"; do
  case "$arg" in
    --bench) bench=true ;;
    *) echo "install-deps: unknown argument '$arg' (usage: install-deps.sh [--bench])" >&2; exit 2 ;;
  esac
done

build_and_test=(
  # build: JDK + Maven (present on the java-maven image, listed so a bare Debian works too)
  openjdk-17-jdk-headless maven
  # eBPF
  clang llvm libbpf-dev libbpf1 bpftool
  # Wasm guests (C -> wasm32-wasi reactor modules)
  clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32
  # tests and scripts
  iproute2 curl procps jq
  # the control plane's /metrics test: promtool (the Prometheus linter) and the reference text parser
  prometheus python3 python3-prometheus-client
  # the dashboard's browser test: headless Chromium driven by Selenium through chromium-driver
  chromium chromium-driver
  # the API tests' real clients: a venv for the Python SDKs (scripts/install-sdks.sh; node comes with npx
  # below) and Go for the net/http client (src/test/go/build.sh, standard library only)
  python3-venv golang-go
)
bench_only=(
  # bench/dataplane-bench.sh and bench/proxy-floor-bench.sh: the C load generator and the reference proxy
  wrk nginx-light
)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
for p in "${build_and_test[@]}"; do
  installed "$p" || missing+=("$p")
done

# OpenApiLintTest runs Redocly's CLI through npx. Where the apt sources hold a nodejs that ships npm
# and npx itself (NodeSource's, which also conflicts with Debian's npm package), that package is
# the one; otherwise Debian's npm, which brings nodejs and npx along. A present npx is enough.
if ! command -v npx >/dev/null 2>&1; then
  if apt-cache show nodejs 2>/dev/null | grep -q '^Provides:.*\bnpm\b'; then
    missing+=(nodejs)
  else
    missing+=(npm)
  fi
fi

missing_bench=()
for p in "${bench_only[@]}"; do
  installed "$p" || missing_bench+=("$p")
done

if [ "$(id -u)" -ne 0 ]; then
  if [ ${#missing_bench[@]} -gt 0 ]; then
    echo "install-deps: the benchmarks' packages are missing (only bench/ needs them): ${missing_bench[*]}" >&2
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: run as root (or: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  exit 0
fi

if $bench; then
  missing+=("${missing_bench[@]}")
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
