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
        # summation order differs (all-reduce vs one batch): float noise, which Adam amplifies
        torch.testing.assert_close(
            single[key], value, rtol=0, atol=1e-4, msg=f"DDP != single at {key}"
        )
        if value.is_floating_point() and "running" not in key:
            moved = max(moved, float((value - initial[key]).abs().max()))
    assert moved > 100 * 1e-4  # training moved the weights far more than the tolerance
