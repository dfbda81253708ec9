#!/usr/bin/env bash
# Installs the Debian packages NexusCore needs to build and test: the eBPF toolchain (clang, llvm,
# libbpf, bpftool), the Wasm guest toolchain (clang-14 for wasm32-wasi, lld, wasi-libc, the wasm32
# compiler runtime) and the tools the tests drive (iproute2 for veth/netns, curl, promtool and the
# Python Prometheus text parser for the /metrics test, headless Chromium and chromium-driver for the
# dashboard's browser test), wrk and nginx-light for the data-plane benchmark, and node, npm and python3-venv for the official
# OpenAI/Anthropic SDKs the API tests drive (scripts/install-sdks.sh installs the SDKs themselves).
# Idempotent: does nothing when every package is present. Needs root only when something is missing.
set -euo pipefail

packages=(
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
  # bench/dataplane-bench.sh: the C load generator and the reference proxy
  wrk nginx-light
  # the API tests' real clients (scripts/install-sdks.sh): the official SDKs from npm and PyPI
  nodejs python3-venv
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

# npm: part of the nodejs package on NodeSource builds, a package of its own on Debian's (which
# conflicts with NodeSource's nodejs): asked for only when the command is absent.
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
