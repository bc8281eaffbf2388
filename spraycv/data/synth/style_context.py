"""What a style's paint, spray and sensor hooks see of the frame being rendered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spraycv.config.render import StyleConfig
from spraycv.data.synth.params import SceneParams


@dataclass
class StyleContext:
    """One frame's state for the style hooks.

    Attributes:
        scene: the scene being rendered (after the style's scene hooks).
        cfg: the styles' ranges.
        rng: the hooks' own stream (seeded by the frame: a video's frames get the same
            props, dust and sensor settings).
        spraying: (H, W) bool, union of the spraying nozzles' envelopes: props keep out of it.
        params: what the hooks drew that the record should carry ("style_params").
    """

    scene: SceneParams
    cfg: StyleConfig
    rng: np.random.Generator
    spraying: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def px(self) -> float:
        """Pixel scale: image size / 512."""
        return min(self.scene.width, self.scene.height) / 512.0

    @property
    def spray_px(self) -> float:
        """The sprays' own pixel scale (SceneParams.spray_px): droplets and their wash."""
        return self.scene.spray_px

    @property
    def shape(self) -> tuple[int, int]:
        return self.scene.height, self.scene.width
