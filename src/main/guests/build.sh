#!/usr/bin/env bash
# Placeholder: builds the guests artifacts into the directory given as $1.
set -euo pipefail
mkdir -p "$1"
