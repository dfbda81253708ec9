#!/usr/bin/env bash
# Installs the official client SDKs the API tests drive as real clients of the router:
#   DIR/node : npm packages `openai` and `@anthropic-ai/sdk` (npm install --prefix DIR/node)
#   DIR/py   : a Python venv with `openai` and `anthropic` from PyPI, and `requests` (the most used
#              Python HTTP client, a real client in RealClientVerdictsTest and routing-eval.sh)
# Versions are pinned here, and only here (io.nexuscore.testing.Sdks runs this script).
# Idempotent and offline-tolerant: a part whose stamp file names the pinned versions is left alone, so
# a second run needs no network. Needs node/npm (Debian nodejs, npm) and python3 with venv (Debian
# python3-venv); scripts/install-deps.sh lists them.
# Usage: scripts/install-sdks.sh DIR
set -euo pipefail

NPM_OPENAI=7.60.0
NPM_ANTHROPIC=1.17.0
PY_OPENAI=3.22.1
PY_ANTHROPIC=1.13.0
PY_REQUESTS=2.34.2

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir="$1"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

node_stamp="openai@$NPM_OPENAI @anthropic-ai/sdk@$NPM_ANTHROPIC"
py_stamp="openai==$PY_OPENAI anthropic==$PY_ANTHROPIC requests==$PY_REQUESTS"

if [ "$(cat "$dir/node/.installed" 2>/dev/null)" != "$node_stamp" ]; then
  command -v npm >/dev/null || { echo "install-sdks: npm is missing (Debian npm; run scripts/install-deps.sh)" >&2; exit 1; }
  echo "install-sdks: npm install $node_stamp into $dir/node" >&2
  mkdir -p "$dir/node"
  # A package.json of its own keeps npm from walking up to an unrelated one.
  [ -f "$dir/node/package.json" ] || echo '{"name":"nexuscore-test-sdks","private":true}' > "$dir/node/package.json"
  npm install --prefix "$dir/node" --no-audit --no-fund --loglevel=error \
    "openai@$NPM_OPENAI" "@anthropic-ai/sdk@$NPM_ANTHROPIC" >&2
  echo "$node_stamp" > "$dir/node/.installed"
fi

if [ "$(cat "$dir/py/.installed" 2>/dev/null)" != "$py_stamp" ]; then
  command -v python3 >/dev/null || { echo "install-sdks: python3 is missing (Debian python3)" >&2; exit 1; }
  if [ ! -x "$dir/py/bin/python" ]; then
    echo "install-sdks: python3 -m venv $dir/py" >&2
    python3 -m venv "$dir/py" || {
      rm -rf "$dir/py"
      echo "install-sdks: python3 -m venv failed (Debian python3-venv; run scripts/install-deps.sh)" >&2
      exit 1
    }
  fi
  echo "install-sdks: pip install $py_stamp into $dir/py" >&2
  # shellcheck disable=SC2086
  "$dir/py/bin/python" -m pip install -q --disable-pip-version-check $py_stamp >&2
  echo "$py_stamp" > "$dir/py/.installed"
fi

echo "$dir"
