#!/usr/bin/env bash
# Placeholder: builds the bpf artifacts into the directory given as $1.
set -euo pipefail
mkdir -p "$1"
