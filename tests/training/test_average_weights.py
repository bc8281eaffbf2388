"""scripts/average_weights.py: the mean of checkpoints of one architecture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from repo_scripts import load_script, script_path
from safetensors.torch import load_file, save_file

from spraycv.training.checkpoint import (
    SHIPPED_DTYPE,
    copy_as_shipped,
    load_checkpoint,
    read_sidecar,
    round_to_shipped,
)

SCRIPT = script_path("average_weights")


CASES = [  # states, expected mean (None: an error naming the odd checkpoint)
    ("floats are averaged", [{"w": torch.tensor([0.0, 2.0])}, {"w": torch.tensor([2.0, 4.0])}],
     {"w": torch.tensor([1.0, 3.0])}),
    ("three, fp16 read as fp32", [{"w": torch.tensor([1.0], dtype=torch.float16)},
     {"w": torch.tensor([2.0])}, {"w": torch.tensor([6.0])}], {"w": torch.tensor([3.0])}),
    ("integer buffers are the first's", [{"n": torch.tensor(5)}, {"n": torch.tensor(9)}],
     {"n": torch.tensor(5)}),
    ("other tensors", [{"w": torch.zeros(1)}, {"v": torch.zeros(1)}], None),
]  # fmt: skip


@pytest.mark.parametrize(("states", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_average_state(states, expected) -> None:
    average_state = load_script("average_weights").average_state
    if expected is None:
        with pytest.raises(ValueError, match="checkpoint 1"):
            average_state(states)
        return
    out = average_state(states)
    assert out.keys() == expected.keys()
    for key, value in expected.items():
        assert torch.equal(out[key], value.to(out[key].dtype))


ONLY_CASES = [  # only, expected (None: an error naming the prefix that matches nothing)
    ("one group", ("enc.",), {"enc.w": torch.tensor([1.0]), "dec.w": torch.tensor([0.0])}),
    ("two groups", ("enc.", "dec."), {"enc.w": torch.tensor([1.0]), "dec.w": torch.tensor([2.0])}),
    ("none: every tensor", (), {"enc.w": torch.tensor([1.0]), "dec.w": torch.tensor([2.0])}),
    ("a prefix that names nothing", ("decoder.",), None),
]  # fmt: skip


@pytest.mark.parametrize(("only", "expected"), [c[1:] for c in ONLY_CASES],
                         ids=[c[0] for c in ONLY_CASES])  # fmt: skip
def test_average_state_only(only, expected) -> None:
    """Tensors outside `only` stay the first checkpoint's."""
    average_state = load_script("average_weights").average_state
    states = [
        {"enc.w": torch.tensor([0.0]), "dec.w": torch.tensor([0.0])},
        {"enc.w": torch.tensor([2.0]), "dec.w": torch.tensor([4.0])},
    ]
    if expected is None:
        message = r"'decoder\.' names no tensor; groups: dec\.w\., enc\.w\."
        with pytest.raises(ValueError, match=message):
            average_state(states, only)
        return
    out = average_state(states, only)
    assert {k: v.tolist() for k, v in out.items()} == {k: v.tolist() for k, v in expected.items()}


def test_the_script_averages_real_checkpoints(tmp_path: Path) -> None:
    """The shipped refiner and a copy with every float weight doubled average to 1.5 x."""
    shipped = SCRIPT.parents[1] / "weights" / "default.refiner.safetensors"
    doubled = tmp_path / "doubled.safetensors"
    run = [sys.executable, str(SCRIPT), str(shipped), str(shipped), "--out"]
    subprocess.run([*run, str(doubled)], check=True, capture_output=True)  # a copy, fp16
    state = load_file(doubled)
    save_file({k: v * 2 if v.is_floating_point() else v for k, v in state.items()}, doubled)
    out = tmp_path / "soup.safetensors"
    run[3] = str(doubled)
    done = subprocess.run([*run, str(out)], check=True, capture_output=True, text=True)
    assert "mean of 2 checkpoints" in done.stdout
    soup = load_file(out)
    key = next(k for k, v in state.items() if v.is_floating_point() and v.abs().max() > 0)
    assert torch.allclose(soup[key].float(), 1.5 * state[key].float(), rtol=2e-3, atol=1e-4)
    assert out.with_suffix(".json").is_file()


def test_a_model_rounded_to_the_shipped_precision_is_its_shipped_copy(tiny_checkpoint, tmp_path):
    """`round_to_shipped` in memory equals `copy_as_shipped` on disk (loaded in float32), and
    both differ from the float32 weights: what is judged is what ships."""
    weights, _, _ = tiny_checkpoint(tmp_path)
    copy = copy_as_shipped(weights, tmp_path / "shipped" / "m.safetensors")
    (full, _), (shipped, _) = load_checkpoint(weights), load_checkpoint(copy)
    rounded = round_to_shipped(load_checkpoint(weights)[0]).state_dict()
    assert all(torch.equal(rounded[k], v) for k, v in shipped.state_dict().items())
    assert any(not torch.equal(v, rounded[k]) for k, v in full.state_dict().items())
    assert read_sidecar(copy)["weights_dtype"] == str(SHIPPED_DTYPE).removeprefix("torch.")
