#!/usr/bin/env bash
# Where the XDP classifier spends its time under real traffic, by source line (root).
# Starts the router on the default configuration (./start.sh, kernel mode on lo), turns the adaptive
# loop off, warms it with 100 prompts, then samples every CPU with perf (cpu-clock, FREQ Hz) while
# the OpenAI Python SDK sends GSM8K's first LIMIT prompts (bench/routing-eval.sh, bpf_stats on), and prints
# bench/xdp-stalls.py's table: the program's samples per function and per source line. Stops the
# router it started (./cleanup.sh). perf's own interrupts slow the program down (at 25 kHz the
# XDP run time grew ~8x here): read the table as where the time goes, not how much there is of it.
# Usage: bench/xdp-stalls.sh [LIMIT] [FREQ]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-1319}
freq=${2:-20000}
if [ "$(id -u)" != 0 ]; then echo "xdp-stalls: needs root (eBPF, perf -a)" >&2; exit 1; fi
command -v perf >/dev/null || { echo "xdp-stalls: perf not found (apt-get install linux-perf)" >&2; exit 1; }
source scripts/lib.sh
if pid="$(nx_router_pid)" && [ -n "$pid" ]; then
  echo "xdp-stalls: a router is already running (pid $pid); stop it first (./cleanup.sh)" >&2
  exit 1
fi
out=$(mktemp -d /tmp/xdp-stalls.XXXXXX)
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$stats_before"; ./cleanup.sh >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
./start.sh > "$out/start.log" 2>&1 || { cat "$out/start.log" >&2; exit 1; }
token_file=/var/lib/nexuscore/control.token
[ -r "$token_file" ] || token_file="$NX_RUN_DIR/control.token"
curl -sf -XPATCH "$NX_CONTROL_URL/adaptive" -H "Authorization: Bearer $(cat "$token_file")" \
  -H 'content-type: application/merge-patch+json' -d '{"enabled":false,"calibrate":false}' > /dev/null
corpus="${NEXUSCORE_CORPUS:-$NX_ROOT/../shared/corpus}/gsm8k-test.jsonl"
bash bench/routing-eval.sh --client openai-python --corpora "gsm8k=$corpus" --limit 100 > "$out/warm.log" 2>&1
sysctl -q kernel.bpf_stats_enabled=1
perf record -q -e cpu-clock -F "$freq" -a -o "$out/perf.data" -- \
  bash bench/routing-eval.sh --client openai-python --corpora "gsm8k=$corpus" --limit "$limit" > "$out/eval.log" 2>&1
grep -E '^kernel|runs by|bpf_stats' "$out/eval.log" || true
python3 bench/xdp-stalls.py "$out/perf.data" --prog nexus_classify
