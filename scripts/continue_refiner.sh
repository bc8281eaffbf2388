#!/usr/bin/env bash
# Continue the shipped refiner on frames it has never seen, in the background-friendly way
# of docs/experiments.md (one thread; re-run the same command to resume after a stop):
#   nohup nice -n 10 bash scripts/continue_refiner.sh SEED NAME [STEPS] > runs/NAME.log 2>&1 &
# renders datasets/train_styles_seedSEED once (8000 frames of the style mix), then trains
# runs/NAME with configs/refine/refiner_fresh_frames.yaml from weights/default.refiner.safetensors
# (STEPS: the config's own unless given).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 SEED NAME [STEPS]" >&2; exit 2; }
seed=$1 name=$2
steps=()
[ $# -ge 3 ] && steps=("steps=$3")
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
frames=datasets/train_styles_seed$seed
if [ ! -f "$frames/.done" ]; then
  .venv/bin/spraycv synth -c configs/render/train.yaml --n 8000 --seed "$seed" --workers 1 \
    --out "$frames"
  touch "$frames/.done"
fi
.venv/bin/spraycv refiner train -c configs/refine/refiner_fresh_frames.yaml name="$name" \
  train_data="$frames" init_weights=weights/default.refiner.safetensors "${steps[@]}"
