#!/usr/bin/env bash
# The held-out figures of a model and refiner: one `spraycv eval` per set, on one thread.
#   bash scripts/eval_heldout.sh NAME WEIGHTS REFINER [SET... | all]
# writes runs/eval/NAME_SET/ (metrics.json, metrics_by_style.json, frames.jsonl) and prints
# each set's summary. The sets are those of docs/experiments.md (render them first with
# scripts/render_eval_sets.sh); none named: the six of issues 13 and 15; `all`: the 18
# held-out sets that scripts/compare_heldout.py pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: $0 NAME WEIGHTS REFINER [SET... | all]" >&2; exit 2; }
name=$1 weights=$2 refiner=$3
shift 3
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(heldout heldout_unseen heldout_hard heldout_nospray heldout_dim heldout_dim_twins)
if [ "${sets[*]}" = all ]; then
  sets=(heldout heldout_unseen heldout_hard heldout_nospray heldout_dim heldout_dim_twins
    heldout_draw2 heldout_draw3 heldout_long heldout_long_twins heldout_bodies heldout_wide
    heldout_43 heldout_portrait heldout_small heldout_sun heldout_sheet independent)
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p runs/eval
for set in "${sets[@]}"; do
  out=runs/eval/${name}_${set}
  .venv/bin/spraycv eval --weights "$weights" --refiner "$refiner" --data "datasets/$set" \
    --out "$out" > "$out.log" 2>&1 || { echo "$set: failed, see $out.log" >&2; continue; }
  echo "$set $(.venv/bin/python -c "import json, sys; print(json.load(open(sys.argv[1])))" "$out/metrics.json")"
done
