#!/usr/bin/env bash
# One lent-GPU session in one command, from a bare checkout: render the data once, compare
# the five architectures and the shipped recipe under one wall-time budget on one held-out
# set, train the shipped recipe longer, add its apex head, evaluate it end to end, and run
# the GPU benchmark. Everything lands under $OUT (runs, leaderboard, metrics, bench table).
#
# Usage: OUT=... bash scripts/gpu_session.sh
#   PHASES           which of "render compare train apex eval bench" to run (default: all)
#   COMPARE_MINUTES  training minutes per compared model (default 0.8)
#   TRAIN_MINUTES    minutes for the shipped recipe's longer run (default 2.5)
#   TRAIN_EPOCHS     its epochs (default: sized to the minutes at an H200's pace)
#   N_TRAIN N_VAL N_HELDOUT  rendered images (default 6000 / 300 / 400)
#   DATA             where train/ val/ heldout/ are rendered, or found (default outputs/gpu_data)
#   RECIPE           the config trained in "train" (default unet_mobilenetv3_small_gpu; a
#                    fine-tune of the shipped model: unet_mobilenetv3_small_ft256_gpu)
#   TRAIN_SEED       the training render's seed (default 1); VAL_SEED: render val in the
#                    standard look alone with this seed (as datasets/val_std), not the mix
#   N_FAR            also render this many far views for "train" (default 0): the training
#                    mix at 1024 px with configs/render/far_view.overrides, as datasets/train_small
#                    (the far view the shipped fine-tune lost, experiments row 129)
#   N_SUN N_DIM N_HARD N_SHEET  also render this many frames of another look for "train"
#                    (default 0 each; the table EXTRA_LOOKS below): sunlit (as
#                    datasets/train_sun, experiments rows 170-171: what the CPU could not
#                    teach the network), dim (as datasets/train_dim), hard negatives (as
#                    datasets/train_hard, row 192: the hard set is the look the refiner alone
#                    cannot fix) and translucent sheets (as datasets/train_sheet, row 194: the
#                    third drawer's misses, which CPU fine-tunes bought at a cost elsewhere)
#   TEACHER          "apex" refits the trained model's own head to this model's apex heat
#                    (`apex-head --teacher`, experiments row 126) instead of a fresh head
# The defaults fit one 10-minute command with start-up to spare on an H200 with 16 cores
# (rendering ~1 min, compare 6 x ~1 min, train 2.5 min, apex head, eval, bench ~1.5 min).
# On the lent H200, install scripts/gpu_wheels.txt's wheels first (its header says how).
# Dry run on a CPU: DEVICE=cpu WORKERS=2 N_TRAIN=24 N_VAL=8 N_HELDOUT=6 COMPARE_MINUTES=0.1
#   TRAIN_MINUTES=0.2 OUT=/tmp/gpusession bash scripts/gpu_session.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-outputs/gpu}"
phases="${PHASES:-render compare train apex eval bench}"
device="${DEVICE:-cuda}"
workers="${WORKERS:-16}"
data="${DATA:-outputs/gpu_data}"  # in the tree, not under $OUT: kept between calls, not sent back
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
precision="bf16-mixed"
[[ "$device" == "cpu" ]] && precision="32"
recipe="${RECIPE:-unet_mobilenetv3_small_gpu}"
final="$out/model_apex.safetensors"
want() { [[ " $phases " == *" $1 "* ]]; }
# Other looks rendered beside the training mix for "train": the folder, the variable that
# says how many, the render config and the seed offset from TRAIN_SEED (far views, 1024 px
# with overrides, are rendered on their own above them).
EXTRA_LOOKS=(
    "train_sun N_SUN configs/render/sun.yaml 2"
    "train_dim N_DIM configs/render/heldout_dim.yaml 3"
    "train_hard N_HARD configs/render/heldout_hard.yaml 4"
    "train_sheet N_SHEET configs/render/sheet.yaml 5"
)
stamp() { echo "== $(date +%T) $*"; }
mkdir -p "$out"

if want render && [[ ! -d "$data/heldout" ]]; then
    stamp render
    synth() { python3 -m spraycv synth "$@" --workers "$workers"; }
    synth -c configs/render/train.yaml --out "$data/train" --n "${N_TRAIN:-6000}" \
        --seed "${TRAIN_SEED:-1}"
    val_look=(-c configs/render/train.yaml --seed 2)
    [[ -n "${VAL_SEED:-}" ]] && val_look=(--seed "$VAL_SEED")
    synth "${val_look[@]}" --out "$data/val" --n "${N_VAL:-300}"
    if ((${N_FAR:-0} > 0)); then
        mapfile -t far_view < <(grep -v '^#' configs/render/far_view.overrides)
        synth -c configs/render/train.yaml --out "$data/train_far" --n "$N_FAR" \
            --seed "$((${TRAIN_SEED:-1} + 1))" --size 1024 "${far_view[@]}"
    fi
    for look in "${EXTRA_LOOKS[@]}"; do
        read -r name count config offset <<< "$look"
        if ((${!count:-0} > 0)); then
            synth -c "$config" --out "$data/$name" --n "${!count}" \
                --seed "$((${TRAIN_SEED:-1} + offset))"
        fi
    done
    synth --out "$data/heldout" --n "${N_HELDOUT:-400}" --seed 1000  # never used in training
fi
parts="$data/train"
for extra in train_far "${EXTRA_LOOKS[@]%% *}"; do
    [[ -d "$data/$extra" ]] && parts="$parts,$data/$extra"
done
train_data="[$parts]"
common=(device="$device" precision="$precision" train_data="$train_data" val_data="$data/val"
    workers=$((workers > 2 ? workers - 2 : 0)))

# one-cycle runs over `epochs`: size them to the budget (about 4.5 epochs a minute for the
# small models on an H200 at 6000 images) so that the rate has come down when time is up;
# max_minutes still stops a slower model, mid-schedule
epochs_for() { python3 -c "print(max(2, int($1 * 4.5 * 6000 / ${N_TRAIN:-6000})))"; }

if want compare; then
    stamp compare
    sets=()
    epochs=$(epochs_for "${COMPARE_MINUTES:-0.8}")
    for kv in "${common[@]}" batch_size=32 epochs="$epochs" early_stop_patience=null; do
        sets+=(--set "$kv")
    done
    python3 -m spraycv compare \
        configs/unet_mobilenet_v2.yaml configs/unetplusplus_mobilenet_v2.yaml \
        configs/fpn_mobilenet_v2.yaml configs/deeplabv3plus_mobilenet_v2.yaml \
        configs/segformer_mit_b0.yaml "configs/$recipe.yaml" \
        --test-data "$data/heldout" --minutes "${COMPARE_MINUTES:-0.8}" --out "$out/compare" \
        "${sets[@]}"
fi

if want train; then
    stamp train
    minutes="${TRAIN_MINUTES:-2.5}"
    epochs="${TRAIN_EPOCHS:-$(epochs_for "$minutes")}"
    python3 -m spraycv train -c "configs/$recipe.yaml" --quiet "${common[@]}" \
        out_dir="$out/train" epochs="$epochs" max_minutes="$minutes"
fi

if want apex; then
    stamp apex
    head=()  # a fresh head on the rendered apexes, or the model's own refitted to a teacher's
    [[ -n "${TEACHER:-}" ]] && head=(--teacher "$TEACHER" --keep-head --lr 0.001 --epochs 8
        --max-images 3000)
    python3 -m spraycv apex-head --weights "$out/train/$recipe/best.safetensors" \
        --data "$data/train" --val "$data/val" --out "$final" --device "$device" --quiet \
        "${head[@]}"
fi

if want eval; then
    stamp eval
    python3 -m spraycv eval --weights "$final" --data "$data/heldout" --out "$out/eval"
fi

if want bench && [[ "$device" != "cpu" ]]; then
    stamp bench
    python3 benchmarks/gpu_bench.py --weights "$final" --json "$out/gpu_bench.json" \
        | tee "$out/gpu_bench.txt"
fi
stamp done
