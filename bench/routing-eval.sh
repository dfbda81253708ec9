#!/usr/bin/env bash
# Routing evaluation against a running router (./start.sh first): sends the prompts of the shared
# corpus (GSM8K, MT-Bench) and of bench/data (unseen kinds: long passages, multiple choice, code, other languages, other scripts, structured data, Python) as OpenAI
# chat requests and prints per corpus the strict, banded and gross misroute rates against an
# independent cl100k_base count (jtokkit), the confusion matrix, and how often the router's observed
# tier (X-NX-Tier) and token count (X-NX-Tokens) equal that count. Loopback only; run it with the
# adaptive loop off (PATCH /adaptive) so the thresholds stay put, or it warns.
#   bench/routing-eval.sh [--client one-write|jdk|openai-python|urllib|requests|go] [--band-percent 20] [--concurrency 4] [--limit N] [--corpora NAME=FILE,...] [--tools N] [--content parts] [--system TEXT] [--non-ascii escaped] [--turns N] [--api completions|responses|messages]
# --tools N (1-8) sends each prompt as a function-calling request with N tool definitions after the messages.
# --content parts writes each message's content as a list of text parts instead of a string.
# --system TEXT puts a system message before each prompt (the truth then counts both, joined by a line break).
# --non-ascii escaped writes every non-ASCII character as a \u escape, as Python's json.dumps does by default.
# --turns N sends each prompt as the last of N messages, the corpus's N-1 prompts before it as the history
# (alternately user and assistant); the truth counts every content, joined by line breaks.
# --client picks how requests are written: one-write (head and body in one write, as curl and Node's
# fetch do), jdk (java.net.http: the head, then the body), openai-python (the official OpenAI SDK,
# httpx: the head, then the body), urllib (Python's standard library: head and body in one send),
# requests (a requests Session, urllib3: the head, then the body), go (Go's net/http, src/test/go/chatclient:
# head and body through a 4 KB buffer; built into target/go by src/test/go/build.sh, Debian golang-go).
# --api completions sends each prompt as the "prompt" string of a legacy /v1/completions request.
# --api responses / --api messages send each conversation as an OpenAI Responses (instructions, input) or an
# Anthropic Messages (system, messages) request; the router scores them as the equivalent chat.
# At the end it prints the router's XDP program cost per packet over the run (every packet on --device, default lo):
# the in-kernel histogram's mean, P50 and P99 (from the control plane's /metrics; metrics.kernelTiming) and, when
# kernel.bpf_stats_enabled is 1 (sysctl), the kernel's own run_time_ns / run_cnt of the attached program. Other
# traffic on the same interface counts too: measure on an otherwise idle loopback.
# The corpus directory is ../shared/corpus beside the checkout, or NEXUSCORE_CORPUS.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$NX_ROOT"

corpus="${NEXUSCORE_CORPUS:-$NX_ROOT/../shared/corpus}"
default_corpora="gsm8k=$corpus/gsm8k-test.jsonl,mt-bench=$corpus/mt-bench-questions.jsonl"
default_corpora+=",unseen-passages=$NX_ROOT/bench/data/unseen-passages.jsonl"
default_corpora+=",unseen-multiple-choice=$NX_ROOT/bench/data/unseen-multiple-choice.jsonl"
default_corpora+=",unseen-code=$NX_ROOT/bench/data/unseen-code.jsonl"
default_corpora+=",unseen-languages=$NX_ROOT/bench/data/unseen-languages.jsonl"
default_corpora+=",unseen-scripts=$NX_ROOT/bench/data/unseen-scripts.jsonl"
default_corpora+=",unseen-structured=$NX_ROOT/bench/data/unseen-structured.jsonl"
default_corpora+=",unseen-python=$NX_ROOT/bench/data/unseen-python.jsonl"

# The Python clients run from the SDK venv the API tests use; the Go client is built as the tests build it.
case " $* " in
  *" openai-python "*|*" urllib "*|*" requests "*) bash scripts/install-sdks.sh "${NEXUSCORE_SDKS:-target/sdks}" >&2 ;;
  *" go "*) [ -n "${NEXUSCORE_GO_CLIENT:-}" ] || bash src/test/go/build.sh target >&2 ;;
esac

cp_="${NEXUSCORE_CLASSPATH:-}"
if [ -z "$cp_" ]; then
  cp_="$(nx_bench_classpath io.nexuscore.bench.RoutingEval)"
fi
exec java -cp "$cp_" io.nexuscore.bench.RoutingEval --url "$NX_DATA_URL" --control-url "$NX_CONTROL_URL" \
  --corpora "$default_corpora" "$@"
