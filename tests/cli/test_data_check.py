from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from typer.testing import CliRunner

from spraycv.cli.data import data_app

runner = CliRunner()


def _pair(root: Path, name: str, mask_shape: tuple[int, int] | None = (20, 30)) -> None:
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "masks").mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(root / "images" / f"{name}.jpg"), np.zeros((20, 30, 3), np.uint8))
    if mask_shape is not None:
        cv2.imwrite(str(root / "masks" / f"{name}.png"), np.zeros(mask_shape, np.uint8))


def test_check_clean_folder(tmp_path: Path) -> None:
    _pair(tmp_path, "a")
    result = runner.invoke(data_app, ["check", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "1 samples (folder)" in result.output and "all OK" in result.output


def test_check_reports_every_problem(tmp_path: Path) -> None:
    _pair(tmp_path, "a")
    _pair(tmp_path, "b", mask_shape=None)  # missing mask
    _pair(tmp_path, "c", mask_shape=(21, 30))  # size mismatch
    result = runner.invoke(data_app, ["check", str(tmp_path), "--format", "folder"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.startswith("b: mask missing") for line in lines)
    assert any(line.startswith("c: mask/image size mismatch") for line in lines)
    assert "3 samples (folder)" in lines[-1] and "2 problems in 2 samples" in lines[-1]


def test_check_unknown_format_lists_valid(tmp_path: Path) -> None:
    result = runner.invoke(data_app, ["check", str(tmp_path), "--format", "voc"])
    assert result.exit_code == 1
    assert "unknown format 'voc'; valid: auto, folder, coco, labelme" in result.output


def test_check_empty_folder(tmp_path: Path) -> None:
    result = runner.invoke(data_app, ["check", str(tmp_path)])
    assert result.exit_code == 1 and "empty folder" in result.output
