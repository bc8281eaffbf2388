"""The config schema: the single source of defaults for every part of spraycv."""

from __future__ import annotations

from spraycv.config.base import StrictModel
from spraycv.config.geometry import BandConfig

__all__ = ["BandConfig", "StrictModel"]
