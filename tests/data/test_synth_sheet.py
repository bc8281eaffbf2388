"""The translucent sheet (spraycv.data.synth.sheet): a faint, rippled film next to the orifice."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from spraycv.config.render import RenderConfig
from spraycv.data.synth import render_sample
from spraycv.data.synth.envelope import EnvelopeSpec
from spraycv.data.synth.sheet import film_gain

SIZE = 256


_ENV = EnvelopeSpec(
    apex=(50.0, 10.0), axis=(0.0, 1.0), half_left_deg=25.0, half_right_deg=25.0, length=80.0,
    s_bend=80.0, gravity=0.0, gravity_dir=(0.0, 1.0), drag=0.0, front_flatness=1.0, ragged=(),
)  # fmt: skip


@pytest.mark.parametrize(
    ("point", "on_film", "lo", "hi"),
    [
        ((50, 15), True, 0.3 * 0.5, 0.3 * 1.5),  # next to the orifice: the film
        ((55, 30), True, 0.3 * 0.5, 0.3 * 1.5),  # inside the wedge, before breakup (20 px)
        ((50, 36), True, 0.3 * 0.5, 1.0),  # in the blend past breakup
        ((50, 50), False, 1.0, 1.0),  # droplets: past the blend (30 px)
        ((50, 5), False, 1.0, 1.0),  # behind the apex
        ((95, 20), False, 1.0, 1.0),  # beside the wedge
    ],
)
def test_film_gain_dims_the_sheet_up_to_breakup_only(
    point: tuple[int, int], on_film: bool, lo: float, hi: float
) -> None:
    """Opacity 0.3, waves 0.5 deep: the film's light is scaled by 0.15-0.45, back to 1 by
    1.5 x the breakup distance (20 px); nothing behind the apex or beside the wedge."""
    gain, where = film_gain(_ENV, 20.0, (100, 100), 0.3, 0.5, 6.0, 0.0)
    x, y = point
    assert bool(where[y, x]) is on_film
    if on_film:
        assert lo - 1e-6 <= gain[y, x] <= hi + 1e-6


def test_film_gain_ripples_around_the_apex() -> None:
    """Waves of 6 px: along the axis the gain swings through its full depth within a
    wavelength, while along an arc around the apex (one radius) it stays the same."""
    gain, _ = film_gain(_ENV, 40.0, (100, 100), 0.4, 0.5, 6.0, 0.0)
    along = gain[14:26, 50]
    assert along.max() - along.min() > 0.3  # 0.4 at most, sampled at whole pixels
    angles = np.radians(np.linspace(-15, 15, 7))
    xs, ys = 50 + 20 * np.sin(angles), 10 + 20 * np.cos(angles)
    arc = [gain[round(y), round(x)] for x, y in zip(xs, ys, strict=True)]
    assert np.ptp(arc) < 0.2  # whole-pixel sampling of a 6 px wave


def test_translucent_sheets_are_fainter_than_their_twins_next_to_the_orifice() -> None:
    """The film scatters less light than the standard sheet of the same seed, so its grey
    level moves towards the background's; beyond the films (and the camera's blur of them)
    next to nothing changes."""
    cfg = RenderConfig.model_validate({"styles": {"weights": {"translucent_sheet": 1.0}}})
    moved = 0
    for seed in range(4):
        res, twin = render_sample(seed, SIZE, cfg), render_sample(seed, SIZE)
        params = res.record["style_params"]
        assert 0.0 < params["sheet_opacity"] <= 1.0
        grey = [cv2.cvtColor(r.image, cv2.COLOR_BGR2GRAY).astype(np.float32) for r in (res, twin)]
        film = np.zeros(res.mask.shape, bool)
        for nz in res.record["nozzles"]:
            if nz["state"] == "off":
                continue
            env = EnvelopeSpec(**nz["params"]["envelope"])
            breakup = nz["params"]["breakup_frac"] * env.length
            film |= film_gain(env, breakup, res.mask.shape, 0.5, 0.0, 5.0, 0.0)[1]
        beyond = ~cv2.dilate(film.astype(np.uint8), np.ones((25, 25), np.uint8)).astype(bool)
        assert np.abs(grey[0][beyond] - grey[1][beyond]).mean() < 0.25, seed  # exposure: +-2
        core = film & (res.mask > 0)
        if core.sum() >= 20:
            moved += int(np.abs(grey[0][core] - grey[1][core]).mean() > 2.0)
    assert moved >= 2
