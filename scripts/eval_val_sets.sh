#!/usr/bin/env bash
# The validation sets, which choose between variants (the held-out sets only report;
# docs/experiments.md), each read by every variant of benchmarks/pipeline_variants.py on
# masks computed once per set, on one thread:
#   bash scripts/eval_val_sets.sh [--weights W] VARIANT...
#   e.g. bash scripts/eval_val_sets.sh base refiner=runs/refiner_s9/snap/step3000.safetensors
# (render the sets first: scripts/render_eval_sets.sh). One Markdown table per set.
set -euo pipefail
cd "$(dirname "$0")/.."
weights=()
if [ "${1:-}" = "--weights" ]; then weights=(--weights "$2"); shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--weights W] VARIANT..." >&2; exit 2; }
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
for set in val_std val val_hard val_long val_dim val_nospray; do
  [ -f "datasets/$set/labels.jsonl" ] || { echo "datasets/$set: not rendered (scripts/render_eval_sets.sh)" >&2; exit 2; }
  .venv/bin/python benchmarks/pipeline_variants.py --data "datasets/$set" --n 100000 \
    "${weights[@]}" "$@" 2>&1 | grep -v Warning
done
