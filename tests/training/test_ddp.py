from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from training_helpers import TINY

from spraycv.config.train import ModelConfig
from spraycv.models import create_model
from spraycv.training.loop import seed_everything

WORKER = Path(__file__).with_name("ddp_worker.py")
REPO = Path(__file__).resolve().parents[2]
# DDP and one process may differ by this share of a tensor's update (float noise; a missing
# all-reduce makes each rank step on its own half of the batch: far more)
UPDATE_TOLERANCE = 0.02  # 0.0008 at most on 2026-12-01


def _run(cmd: list[str], env_extra: dict[str, str]) -> None:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "GLOO_SOCKET_IFNAME": "lo",
        "PYTHONPATH": str(REPO),
        **env_extra,
    }
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.mark.slow
def test_two_gloo_ranks_agree_and_match_one_process(wedge_data: Path, tmp_path: Path):
    # 12 training images: 3 steps of 2 x 2 images, or of 4 in one process; no dropout, frozen
    # BatchNorm, so that the only difference left is the gradient all-reduce
    common = [
        f"train_data={wedge_data}",
        *TINY,
        "epochs=2",
        "freeze_batchnorm=true",
        "precision=32",  # fp32: bf16 (auto on an AVX512-BF16 CPU) would add rounding noise
        "seed=3",
        "data.split_fractions=[0.5,0.5,0.0]",
        "model.kwargs={decoder_dropout: 0.0}",
    ]
    ddp_out, single_out = tmp_path / "ddp", tmp_path / "single"
    ddp_out.mkdir()
    single_out.mkdir()
    _run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            str(WORKER),
            str(ddp_out),
            *common,
            "batch_size=2",
            f"out_dir={ddp_out}",
        ],
        {},
    )
    # one process, the same global batch (2 ranks x 2 = 4)
    _run(
        [
            sys.executable,
            str(WORKER),
            str(single_out),
            *common,
            "batch_size=4",
            f"out_dir={single_out}",
        ],
        {},
    )
    rank0, rank1 = (
        load_file(ddp_out / "rank0.safetensors"),
        load_file(ddp_out / "rank1.safetensors"),
    )
    single = load_file(single_out / "rank0.safetensors")
    seed_everything(3)  # the initial weights both runs started from
    initial = create_model(ModelConfig(arch="FPN", encoder="mobilenet_v2")).state_dict()
    moved = 0.0
    for key, value in rank0.items():
        torch.testing.assert_close(rank1[key], value, rtol=0, atol=0, msg=f"ranks differ at {key}")
        if not value.is_floating_point() or "running" in key:  # frozen BatchNorm: unmoved
            torch.testing.assert_close(single[key], value, msg=f"DDP != single at {key}")
            continue
        # the summation order differs (all-reduce vs one batch): float noise, which Adam turns
        # into whole steps where a gradient is near zero, by an amount that depends on the
        # CPU's vector code; so the updates are compared as tensors, not element by element
        step_ddp, step_single = value - initial[key], single[key] - initial[key]
        gap, size = float((step_ddp - step_single).norm()), float(step_single.norm())
        assert gap <= UPDATE_TOLERANCE * size + 1e-6, f"DDP != single at {key}: {gap} of {size}"
        moved = max(moved, float(step_single.abs().max()))
    assert moved > 1e-2  # training moved the weights
