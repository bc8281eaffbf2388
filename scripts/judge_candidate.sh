#!/usr/bin/env bash
# Judge a candidate pipeline against the shipped one by the ship rule, on a machine that may
# be new: every held-out set (scripts/eval_heldout.sh all) and the third drawer (runs/photo)
# through both pipelines, then scripts/compare_heldout.py.
#   bash scripts/judge_candidate.sh NAME WEIGHTS|- REFINER|-   (-: the shipped file)
#   bash scripts/judge_candidate.sh            (the shipped pipeline alone)
# The shipped pipeline's figures are kept as runs/eval/shipped-HASH_* (HASH: of the shipped
# files), so that a later candidate reuses them and a new shipped file is measured afresh.
# Render the sets first: bash scripts/render_eval_sets.sh. JOBS=1 runs one evaluation at a
# time (default 2, one thread each: about 11 minutes a pipeline on two cores).
# A .safetensors candidate is judged as it would ship, in float16 (the shipped files' precision:
# a float32 checkpoint's readings differ on a few frames, experiments row 201), from a copy in
# runs/judge/NAME/. Writes runs/compare_BASE_NAME.txt; exits as compare_heldout.py does.
set -euo pipefail
cd "$(dirname "$0")/.."
shipped_weights=weights/default.safetensors shipped_refiner=weights/default.refiner.safetensors
base="shipped-$(cat "$shipped_weights" "$shipped_refiner" | sha256sum | cut -c1-8)"
jobs=${JOBS:-2}
mapfile -t sets < <(sed -n '/^if \[ "${sets\[\*\]}" = all \]/,/^fi/p' scripts/eval_heldout.sh \
  | grep -o 'heldout[a-z0-9_]*\|independent' | sort -u)

evaluate() {  # NAME WEIGHTS REFINER: each set not yet measured, and the third drawer
  local name=$1 weights=$2 refiner=$3 todo=() i
  for set in "${sets[@]}"; do
    [ -f "runs/eval/${name}_${set}/metrics.json" ] || todo+=("$set")
  done
  for ((i = 0; i < jobs; i++)); do
    local part=()
    for ((k = i; k < ${#todo[@]}; k += jobs)); do part+=("${todo[k]}"); done
    [ ${#part[@]} -eq 0 ] || bash scripts/eval_heldout.sh "$name" "$weights" "$refiner" "${part[@]}" &
  done
  wait
  if [ -d runs/photo ] && [ ! -f "runs/eval/${name}_photo/metrics.json" ]; then
    OMP_NUM_THREADS=$jobs .venv/bin/spraycv eval --weights "$weights" --refiner "$refiner" \
      --data runs/photo --out "runs/eval/${name}_photo" > "runs/eval/${name}_photo.log" 2>&1 \
      || echo "photo: failed, see runs/eval/${name}_photo.log" >&2
  fi
}

as_shipped() {  # FILE OUT: OUT is FILE in the shipped precision (a .safetensors; else FILE)
  case $1 in
    *.safetensors) .venv/bin/python -c 'import sys; from pathlib import Path
from spraycv.training.checkpoint import copy_as_shipped
print(copy_as_shipped(Path(sys.argv[1]), Path(sys.argv[2])))' "$1" "$2" ;;
    *) echo "$1" ;;
  esac
}

evaluate "$base" "$shipped_weights" "$shipped_refiner"
[ $# -gt 0 ] || { echo "the shipped pipeline: runs/eval/${base}_*"; exit 0; }
[ $# -eq 3 ] || { echo "usage: $0 NAME WEIGHTS|- REFINER|-" >&2; exit 2; }
name=$1 weights=$2 refiner=$3
[ "$weights" != - ] || weights=$shipped_weights
[ "$refiner" != - ] || refiner=$shipped_refiner
mkdir -p "runs/judge/$name"
weights=$(as_shipped "$weights" "runs/judge/$name/model.safetensors")
refiner=$(as_shipped "$refiner" "runs/judge/$name/model.refiner.safetensors")
evaluate "$name" "$weights" "$refiner"
for who in "$base" "$name"; do
  [ -f "runs/eval/${who}_photo/metrics.json" ] && echo "third drawer, $who: $(cat "runs/eval/${who}_photo/metrics.json")"
done
status=0
.venv/bin/python scripts/compare_heldout.py "$base" "$name" | tee "runs/compare_${base}_${name}.txt" || status=$?
exit $status
