#!/usr/bin/env bash
# How the per-script weights of src/main/resources/io/nexuscore/classify/token-blocks.tsv were
# fitted, and the check on text they were not fitted to. Cuts prompts from this machine's Debian
# translations (split by package into a fit half and a held-out half), English manual pages,
# Python and C sources and the shared corpus (bench/estimator/prompts.py); counts each with
# cl100k_base and the scan's features (io.nexuscore.classify.EstimatorFeatures); fits the block
# weights by non-negative least squares and prints them with the held-out errors of the shipped
# table and of the refit (bench/estimator/fit.py). Needs gettext (msgunfmt), python3 with numpy
# and scipy. Offline, a minute or two; writes only under a temporary directory.
#   bench/estimator-fit.sh
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$NX_ROOT"

for tool in msgunfmt python3; do
  command -v "$tool" >/dev/null || { echo "estimator-fit: $tool is missing (apt-get install gettext python3-numpy python3-scipy)" >&2; exit 1; }
done
python3 -c 'import numpy, scipy' 2>/dev/null || { echo "estimator-fit: python3 needs numpy and scipy (apt-get install python3-numpy python3-scipy)" >&2; exit 1; }

work="$(mktemp -d /tmp/nx-estimator-fit.XXXXXX)"
trap 'rm -rf "$work"' EXIT
corpus="${NEXUSCORE_CORPUS:-$NX_ROOT/../shared/corpus}"
python3 bench/estimator/prompts.py "$work/prompts" "$corpus"

cp_="$(nx_bench_classpath io.nexuscore.classify.EstimatorFeatures)"
for half in fit held-out; do
  args=()
  for f in "$work/prompts/$half"/*.jsonl; do
    args+=("$(basename "${f%.jsonl}")=$f")
  done
  java -cp "$cp_" io.nexuscore.classify.EstimatorFeatures "${args[@]}" > "$work/$half.csv"
done
python3 bench/estimator/fit.py "$work/fit.csv" "$work/held-out.csv"
