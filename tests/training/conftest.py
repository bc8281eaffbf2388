from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest


def write_wedge_dataset(root: Path, n: int, size: int = 64, seed: int = 0) -> Path:
    """A tiny images/ + masks/ dataset of bright wedges on noise (fast, no renderer needed)."""
    rng = np.random.default_rng(seed)
    (root / "images").mkdir(parents=True)
    (root / "masks").mkdir()
    for i in range(n):
        half = np.radians(rng.uniform(15, 50))
        apex = np.array([rng.uniform(0.3, 0.7) * size, rng.uniform(0.05, 0.2) * size])
        length = size * 0.7
        pts = [
            apex,
            apex + length * np.array([np.sin(half), np.cos(half)]),
            apex + length * np.array([-np.sin(half), np.cos(half)]),
        ]
        mask = np.zeros((size, size), np.uint8)
        cv2.fillPoly(mask, [np.round(np.array(pts)).astype(np.int32)], 1)
        image = rng.integers(0, 60, (size, size, 3), dtype=np.uint8)
        image[mask > 0] = np.clip(image[mask > 0].astype(int) + 150, 0, 255).astype(np.uint8)
        cv2.imwrite(str(root / "images" / f"{i:04d}.png"), image)
        cv2.imwrite(str(root / "masks" / f"{i:04d}.png"), mask * 255)
    return root


@pytest.fixture(scope="session")
def wedge_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_wedge_dataset(tmp_path_factory.mktemp("wedges"), n=24)


@pytest.fixture(scope="session")
def wedge_data_128(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Fewer, larger wedges: the geometry reads an apex on most of their masks."""
    return write_wedge_dataset(tmp_path_factory.mktemp("wedges128"), n=16, size=128, seed=5)
