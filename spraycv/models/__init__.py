"""Segmentation models: a name-to-architecture table and one `create_model`."""

from __future__ import annotations

from spraycv.models.registry import ARCHITECTURES, create_model, load_encoder_weights

__all__ = ["ARCHITECTURES", "create_model", "load_encoder_weights"]
