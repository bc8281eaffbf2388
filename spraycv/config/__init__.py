"""The config schema: the single source of defaults for every part of spraycv."""

from __future__ import annotations

from spraycv.config.base import StrictModel
from spraycv.config.calibration import CalibrationConfig, CheckerboardConfig
from spraycv.config.data import AugmentConfig, DataConfig
from spraycv.config.finetune import FinetuneConfig
from spraycv.config.geometry import BandConfig, GeometryConfig
from spraycv.config.loader import ConfigError, load_config
from spraycv.config.render import RenderConfig
from spraycv.config.segment import ClassicalSegmenterConfig
from spraycv.config.train import ModelConfig, OptimConfig, TrainConfig

__all__ = [
    "AugmentConfig",
    "BandConfig",
    "CalibrationConfig",
    "CheckerboardConfig",
    "ClassicalSegmenterConfig",
    "ConfigError",
    "DataConfig",
    "FinetuneConfig",
    "GeometryConfig",
    "ModelConfig",
    "OptimConfig",
    "RenderConfig",
    "StrictModel",
    "TrainConfig",
    "load_config",
]
