#!/usr/bin/env bash
# Train the default model on a GPU machine from a bare checkout: render the data there
# (16 cores render thousands of images in a minute), train, leave the run under $OUT.
# Usage: OUT=outputs/gpu bash scripts/gpu_train.sh [N_TRAIN]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-outputs/gpu}"
n_train="${1:-6000}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
data="$(mktemp -d)"
python3 -m spraycv synth -c configs/render/train.yaml --out "$data/train" --n "$n_train" --seed 1 --workers 16
python3 -m spraycv synth -c configs/render/train.yaml --out "$data/val" --n 300 --seed 2 --workers 16
python3 -m spraycv train -c configs/unet_mobilenetv3_small_gpu.yaml --quiet \
    train_data="$data/train" val_data="$data/val" out_dir="$out"
# then the apex head on the frozen network (a minute on the GPU): the run's best.safetensors
# stays as trained, best_apex.safetensors carries the head (ship that one)
python3 -m spraycv apex-head --weights "$out/unet_mobilenetv3_small_gpu/best.safetensors" \
    --data "$data/train" --val "$data/val" --out "$out/best_apex.safetensors" --device cuda \
    --epochs 12 --quiet
