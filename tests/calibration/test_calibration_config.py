"""CalibrationConfig (one method, resolved to mm/px) and write_source_scale (YAML)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from calib_helpers import draw_checkerboard
from pydantic import ValidationError

from spraycv.calibration import CalibrationError, write_source_scale
from spraycv.config import CalibrationConfig


def _board_png(path: Path, square_px: float = 15.0) -> Path:
    image = np.full((240, 320), 128, np.uint8)
    draw_checkerboard(image, (60.0, 50.0), square_px, (6, 5))
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), image)
    return path


@pytest.mark.parametrize(
    ("fields", "method", "expected"),
    [
        ({"mm_per_px": 0.42}, "mm_per_px", 0.42),
        ({"points": [[0, 0], [30, 40]], "distance_mm": 25.0}, "points", 0.5),
        ({"points": ((10.0, 5.0), (10.0, 105.0)), "distance_mm": 42.0}, "points", 0.42),
    ],
)
def test_resolves_direct_and_points(fields: dict, method: str, expected: float) -> None:
    cfg = CalibrationConfig(**fields)
    assert cfg.method == method
    assert cfg.resolve_mm_per_px() == pytest.approx(expected)


def test_resolves_a_checkerboard_relative_to_the_config_folder(tmp_path: Path) -> None:
    _board_png(tmp_path / "cam" / "board.png", square_px=15.0)
    cfg = CalibrationConfig.model_validate(
        {"checkerboard": {"image": "cam/board.png", "inner_corners": [5, 4], "square_mm": 6.0}}
    )
    assert cfg.method == "checkerboard"
    assert cfg.resolve_mm_per_px(base_dir=tmp_path) == pytest.approx(6.0 / 15.0, rel=3e-3)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "exactly one of .* got none"),
        ({"mm_per_px": 0.4, "points": [[0, 0], [1, 1]], "distance_mm": 1}, "got mm_per_px, points"),
        ({"points": [[0, 0], [1, 1]]}, "both points and distance_mm"),
        ({"distance_mm": 10.0}, "both points and distance_mm"),
        ({"mm_per_px": 0.0}, "greater than 0"),
        ({"mm_per_px": -1.0}, "greater than 0"),
        ({"points": [[0, 0], [1, 1]], "distance_mm": -2.0}, "greater than 0"),
        ({"points": [[0, 0]], "distance_mm": 2.0}, "points"),
        ({"mm_per_pixel": 0.4}, "Extra inputs are not permitted"),  # a typo fails loudly
        (
            {"checkerboard": {"image": "b.png", "inner_corners": [2, 4], "square_mm": 5}},
            "at least 3x3",
        ),
        ({"checkerboard": {"image": "b.png", "inner_corners": [5, 4]}}, "square_mm"),
    ],
)
def test_config_errors(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CalibrationConfig.model_validate(fields)


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"points": [[3, 3], [3, 3]], "distance_mm": 5.0}, "coincide"),
        (
            {"checkerboard": {"image": "missing.png", "inner_corners": [5, 4], "square_mm": 5}},
            "no such file",
        ),
    ],
)
def test_resolve_errors(tmp_path: Path, fields: dict, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        CalibrationConfig.model_validate(fields).resolve_mm_per_px(base_dir=tmp_path)


# --- write_source_scale --------------------------------------------------------------------


def _yaml(path: Path, content: object) -> Path:
    path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    return path


def test_updates_an_entry_and_keeps_everything_else(tmp_path: Path) -> None:
    content = {
        "sources": [
            {"name": "cam1", "url": "rtsp://a", "mm_per_px": 0.9, "max_fps": 2.0},
            {"name": "cam2", "url": "/dev/video0"},
        ],
        "api": {"port": 9000},
    }
    path = _yaml(tmp_path / "daemon.yaml", content)
    assert write_source_scale(path, "cam1", 0.42) is False
    data = yaml.safe_load(path.read_text())
    content["sources"][0]["mm_per_px"] = 0.42
    assert data == content
    assert list(data["sources"][0]) == ["name", "url", "mm_per_px", "max_fps"]  # order kept


@pytest.mark.parametrize(
    "initial",
    [None, "", "api: {port: 9000}\n", "sources:\n", "sources:\n- {name: other, url: x}\n"],
)
def test_creates_the_entry(tmp_path: Path, initial: str | None) -> None:
    path = tmp_path / "c.yaml"
    if initial is not None:
        path.write_text(initial)
    assert write_source_scale(path, "cam9", 0.25) is True
    data = yaml.safe_load(path.read_text())
    assert data["sources"][-1] == {"name": "cam9", "mm_per_px": 0.25}
    if initial and "other" in initial:
        assert data["sources"][0] == {"name": "other", "url": "x"}
    if initial and "api" in initial:
        assert data["api"] == {"port": 9000}


@pytest.mark.parametrize(
    ("text", "source", "scale", "message"),
    [
        ("- a\n- b\n", "cam", 0.4, "top level must be a mapping"),
        ("sources: {name: cam}\n", "cam", 0.4, "'sources' must be a list of mappings"),
        ("sources: [cam1, cam2]\n", "cam", 0.4, "'sources' must be a list of mappings"),
        ("sources: [\n", "cam", 0.4, "malformed YAML"),
        ("sources: []\n", "  ", 0.4, "source name must not be empty"),
        ("sources: []\n", "cam", 0.0, "mm_per_px must be a finite number > 0"),
        ("sources: []\n", "cam", float("nan"), "mm_per_px must be a finite number > 0"),
    ],
)
def test_write_errors_leave_the_file_alone(
    tmp_path: Path, text: str, source: str, scale: float, message: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=message):
        write_source_scale(path, source, scale)
    assert path.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]  # no temporary left behind
