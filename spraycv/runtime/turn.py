"""Quarter turns of a frame, so that the network reads its sprays pointing down.

The network reads sprays that point down best: on the held-out sets a frame whose camera is
rolled by 60 deg or more (sprays pointing sideways or up) missed a nozzle ten times as
often, and the same frames turned so that their sprays point down read as upright ones
(experiments row 167). Turns are numpy's `np.rot90(image, k)`: k quarter turns, each
counter-clockwise as an image is shown (x right, y down).
"""

from __future__ import annotations

import numpy as np

MIN_AGREEMENT = 0.5  # the plumes' unit axes must agree this well (the length of their mean)
# for the frame to have one direction to turn: a frame of sprays every way is left as it is


def turn_map(k: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(A (2, 2), b (2,)): a point p = (x, y) of an image of (H, W) `shape` lies at
    A @ p + b in `np.rot90(image, k)`; a direction d turns to A @ d."""
    a, b = np.eye(2), np.zeros(2)
    h, w = shape
    for _ in range(k % 4):  # one turn of an (h, w) image: (x, y) -> (y, w - 1 - x)
        step = np.array([[0.0, 1.0], [-1.0, 0.0]])
        a, b = step @ a, step @ b + np.array([0.0, w - 1.0])
        h, w = w, h
    return a, b


def points_back(points: np.ndarray, k: int, shape: tuple[int, int]) -> np.ndarray:
    """Points (K, 2) of `np.rot90(image, k)` in the coordinates of `image`, of (H, W)
    `shape`."""
    a, b = turn_map(k, shape)
    p = np.asarray(points, np.float64).reshape(-1, 2)
    return (p - b) @ a  # A is orthogonal: its inverse is its transpose


def turn_down(axes: np.ndarray, min_agreement: float = MIN_AGREEMENT) -> int:
    """The quarter turns k (0-3) that point the plumes' mean unit axis (N, 2) most nearly
    down (+y); 0 without axes, or where they disagree (their mean shorter than
    `min_agreement`)."""
    u = np.asarray(axes, np.float64).reshape(-1, 2)
    u = u[np.isfinite(u).all(axis=1)]
    if not len(u):
        return 0
    mean = (u / np.linalg.norm(u, axis=1, keepdims=True)).mean(axis=0)
    if np.linalg.norm(mean) < min_agreement:
        return 0
    down = [(turn_map(k, (1, 1))[0] @ mean)[1] for k in range(4)]
    return int(np.argmax(down))
