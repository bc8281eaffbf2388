#!/usr/bin/env bash
# Render the training sets that the refiner and apex-head runs of docs/experiments.md read,
# once (skips a set already rendered): bash scripts/render_train_sets.sh  (about 10 minutes
# on one core). Their configs' headers name them: configs/refine/refiner_far2.yaml,
# refiner_sun2.yaml, refiner_sun3.yaml, refiner_sun4.yaml, refiner_mix3.yaml and
# refiner_sheet.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/synth_once.sh
synth train -c configs/render/train.yaml --n 4000 --seed 1
mapfile -t far_view < <(grep -v '^#' configs/render/far_view.overrides)
synth train_small -c configs/render/train.yaml --n 800 --seed 11 --size 1024 "${far_view[@]}"
synth train_sun -c configs/render/sun.yaml --n 1200 --seed 21
synth train_dim -c configs/render/heldout_dim.yaml --n 600 --seed 31
synth train_avgdim -c configs/render/heldout_dim.yaml --n 800 --seed 41 styles.weights.dim=0 styles.weights.hdr=0
synth train_long -c configs/render/train_long.yaml --n 1200 --seed 3
synth train_hard -c configs/render/heldout_hard.yaml --n 800 --seed 91
synth train_sheet -c configs/render/sheet.yaml --n 1200 --seed 51
