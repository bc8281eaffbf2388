"""Shared settings of the training tests."""

from __future__ import annotations

# a model and data small enough to train in seconds on two cores
TINY = [
    "model.arch=FPN",
    "model.encoder=mobilenet_v2",
    "data.input_size=64",
    "data.augment.enabled=false",
    "batch_size=4",
    "workers=0",
    "angle_eval_images=0",
    "early_stop_patience=null",
    "optim.lr=0.01",
]
