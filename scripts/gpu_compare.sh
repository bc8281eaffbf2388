#!/usr/bin/env bash
# The five-architecture comparison of issue 3 on a lent GPU machine, from a bare checkout:
# render train / val / held-out sets there (16 cores), train every config under the same
# wall-time budget with GPU settings, evaluate all and the classical baseline on the same
# held-out set, and leave runs, leaderboard and plot under $OUT/compare.
# Usage: OUT=outputs/gpu MINUTES=1.2 bash scripts/gpu_compare.sh
# (MINUTES per model; N_TRAIN, N_HELDOUT, DEVICE, WORKERS for dry runs on a CPU.)
# The leaderboard's CPU latency is measured on that machine's CPU, not on the 2-core one.
# Epochs are sized to MINUTES (about 4.5 a minute at 6000 images on an H200), so that the
# one-cycle rate has come down when time is up; max_minutes still stops a slower model.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-outputs/gpu}"
minutes="${MINUTES:-1.2}"
n_train="${N_TRAIN:-6000}"
n_heldout="${N_HELDOUT:-400}"
device="${DEVICE:-cuda}"
workers="${WORKERS:-16}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
data="$(mktemp -d)"
synth() { python3 -m spraycv synth "$@" --workers "$workers"; }
synth -c configs/render/train.yaml --out "$data/train" --n "$n_train" --seed 1
synth -c configs/render/train.yaml --out "$data/val" --n 300 --seed 2
synth --out "$data/heldout" --n "$n_heldout" --seed 1000  # both lighting styles, all types
precision="bf16-mixed"
[[ "$device" == "cpu" ]] && precision="32"
python3 -m spraycv compare \
    configs/unet_mobilenet_v2.yaml configs/unetplusplus_mobilenet_v2.yaml \
    configs/fpn_mobilenet_v2.yaml configs/deeplabv3plus_mobilenet_v2.yaml \
    configs/segformer_mit_b0.yaml \
    --test-data "$data/heldout" --minutes "$minutes" --out "$out/compare" \
    --set device="$device" --set precision="$precision" --set batch_size=32 \
    --set workers=$((workers - 2)) --set train_data="$data/train" --set val_data="$data/val" \
    --set epochs="$(python3 -c "print(max(2, int($minutes * 4.5 * 6000 / $n_train)))")" \
    --set early_stop_patience=null
