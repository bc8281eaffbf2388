"""Resumable training state: optimiser, schedule, scaler, counters and RNG states."""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from spraycv.training.average import WeightAverage
from spraycv.training.checkpoint import unwrap


def save_state(
    path: Path,
    epoch: int,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    steps_done: int,
    scaler: torch.amp.GradScaler,
    best: dict[str, float],
    history: list[dict[str, float]],
    average: dict | None = None,
) -> None:
    """Write everything `--resume` needs to continue after `epoch` epochs (atomically);
    average: the state of the run's WeightAverage (None without one)."""
    state = {
        "epoch": epoch,
        "model": unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "steps_done": steps_done,
        "scaler": scaler.state_dict(),
        "best": best,
        "history": history,
        "average": average,
        "rng": {
            "python": random.getstate(),
            # as plain lists, so that the file loads with torch.load(weights_only=True)
            "numpy": _numpy_state_to_list(np.random.get_state()),  # noqa: NPY002
            "torch": torch.get_rng_state(),
        },
    }
    tmp = Path(path).with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def restore_state(
    path: Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    scaler: torch.amp.GradScaler,
    average: WeightAverage | None = None,
) -> tuple[int, dict[str, float], list[dict[str, float]]]:
    """Load a saved state in place; returns (epochs done, best metrics, history).

    A state saved without an average leaves `average` to start from the loaded weights.

    The schedule is replayed step by step rather than loaded, so that a resumed run may ask
    for more epochs than the first one planned.
    """
    state = torch.load(path, map_location="cpu", weights_only=True)
    unwrap(model).load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    with warnings.catch_warnings():  # stepping a schedule without optimiser steps warns
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(state["steps_done"]):
            scheduler.step()
    scaler.load_state_dict(state["scaler"])
    if average is not None:
        average.load_state_dict(state.get("average"))
    random.setstate(state["rng"]["python"])
    np.random.set_state(_numpy_state_from_list(state["rng"]["numpy"]))  # noqa: NPY002
    torch.set_rng_state(state["rng"]["torch"])
    return state["epoch"], state["best"], state["history"]


def _numpy_state_to_list(state: tuple) -> list:
    name, keys, pos, has_gauss, cached = state
    return [name, keys.tolist(), int(pos), int(has_gauss), float(cached)]


def _numpy_state_from_list(state: list) -> tuple:
    name, keys, pos, has_gauss, cached = state
    return name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached
