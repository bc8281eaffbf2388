"""Mask metrics: IoU, Dice and boundary F1 per image, summed so they reduce across ranks."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np


def iou_dice(pred: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """IoU and Dice of two (H, W) binary masks; both empty counts as a perfect 1.0."""
    pred, target = pred.astype(bool), target.astype(bool)
    inter = np.logical_and(pred, target).sum()
    total = pred.sum() + target.sum()
    union = total - inter
    if union == 0:
        return 1.0, 1.0
    return float(inter / union), float(2 * inter / total)


def _boundary(mask: np.ndarray) -> np.ndarray:
    """(H, W) bool: pixels of the mask that touch the background (4-neighbourhood)."""
    m = mask.astype(np.uint8)
    eroded = cv2.erode(m, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)
    return (m - eroded).astype(bool)


def boundary_f1(pred: np.ndarray, target: np.ndarray, tolerance_px: float | None = None) -> float:
    """Boundary F1 (Csurka et al.) of two (H, W) binary masks.

    A boundary pixel counts as matched when the other mask's boundary lies within
    `tolerance_px` (default 0.75 % of the image diagonal, at least 1 px).
    """
    bp, bt = _boundary(pred), _boundary(target)
    if not bp.any() and not bt.any():
        return 1.0
    if not bp.any() or not bt.any():
        return 0.0
    if tolerance_px is None:
        tolerance_px = max(1.0, 0.0075 * float(np.hypot(*pred.shape)))
    # distance from every pixel to the nearest boundary pixel of the other mask
    dist_t = cv2.distanceTransform((~bt).astype(np.uint8), cv2.DIST_L2, 3)
    dist_p = cv2.distanceTransform((~bp).astype(np.uint8), cv2.DIST_L2, 3)
    precision = float((dist_t[bp] <= tolerance_px).mean())
    recall = float((dist_p[bt] <= tolerance_px).mean())
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass
class MaskMetrics:
    """Running sums of per-image metrics (sums and a count reduce across ranks by addition)."""

    iou: float = 0.0
    dice: float = 0.0
    bf1: float = 0.0
    count: int = 0
    per_image_iou: list[float] = field(default_factory=list)

    def update(self, pred: np.ndarray, target: np.ndarray) -> None:
        """Add one image: (H, W) binary prediction and target."""
        i, d = iou_dice(pred, target)
        self.iou += i
        self.dice += d
        self.bf1 += boundary_f1(pred, target)
        self.count += 1
        self.per_image_iou.append(i)

    def as_array(self) -> np.ndarray:
        """(4,) float64 sums, for all_reduce."""
        return np.array([self.iou, self.dice, self.bf1, self.count], dtype=np.float64)

    @staticmethod
    def means(sums: np.ndarray) -> dict[str, float]:
        """Mean IoU, Dice and boundary F1 from (4,) summed values."""
        n = max(float(sums[3]), 1.0)
        return {"iou": sums[0] / n, "dice": sums[1] / n, "boundary_f1": sums[2] / n}
