"""Nozzle body shapes: each drawn upstream of its apex; one shape keeps renderer v1's frames."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from spraycv.config.render import BODY_SHAPES, RenderConfig
from spraycv.data.synth.layout import sample_scene
from spraycv.data.synth.params import BodyParams, sample_body
from spraycv.data.synth.scene import draw_hardware

# What sets each shape apart, as a user would see it.
SILHOUETTES = {
    "bayonet": lambda b: b.cap_len > 0 and b.cap_w >= b.tip_w1,
    "tip_only": lambda b: b.cap_len == 0 and b.holder_w < b.tip_w1,
    "one_piece": lambda b: b.tip_color == b.cap_color == b.holder_color,
}


def _one_shape(shape: str) -> RenderConfig:
    return RenderConfig.model_validate(
        {"nozzle": {"body_shape_probs": {shape: 1.0}, "prob_single": 1.0}}
    )


def test_every_shape_has_a_silhouette() -> None:
    assert set(SILHOUETTES) == set(BODY_SHAPES)


@pytest.mark.parametrize("shape", BODY_SHAPES)
def test_shape_drawn_upstream_of_its_apex(shape: str) -> None:
    for seed in range(4):
        scene = sample_scene(np.random.default_rng(seed), 256, 256, _one_shape(shape))
        nz = scene.nozzles[0]
        assert nz.body.shape == shape and SILHOUETTES[shape](nz.body)
        img = np.zeros((256, 256, 3), np.float32)
        body = draw_hardware(img, scene, np.random.default_rng(seed))
        assert body.any() and img[body].max() > 0
        ys, xs = np.nonzero(body)
        axial = (xs - nz.envelope.apex[0]) * nz.envelope.axis[0] + (
            ys - nz.envelope.apex[1]
        ) * nz.envelope.axis[1]
        assert axial.max() < 1.0  # never past the orifice, where the spray starts


def _next_after_body(probs: dict[str, float]) -> tuple[BodyParams, float]:
    rng = np.random.default_rng(7)
    body = sample_body(rng, 30.0, 40.0, probs)
    return body, float(rng.random())


def test_one_shape_draws_no_extra_random_number() -> None:
    v1 = _next_after_body({"bayonet": 1.0})
    assert _next_after_body({"bayonet": 1.0, "tip_only": 0.0}) == v1
    assert RenderConfig().nozzle.body_shape_probs == {"bayonet": 1.0}
    mixed = {"bayonet": 0.5, "tip_only": 0.5}
    drawn = {sample_body(np.random.default_rng(s), 30.0, 40.0, mixed).shape for s in range(20)}
    assert drawn == {"bayonet", "tip_only"}


def test_unknown_shape_names_the_valid_ones() -> None:
    with pytest.raises(ValidationError, match="bayonet"):
        RenderConfig.model_validate({"nozzle": {"body_shape_probs": {"round": 1.0}}})
