"""The pipeline on rendered frames through cameras the renderer does not draw.

Each perturbation changes the pixels of a held-out frame and keeps its geometry, so the
rendered truth still holds: JPEG at a low quality, sensor noise, a tone curve, defocus, a
lower-resolution sensor enlarged back, the gain set too low or too high (highlights
clipped), lower contrast, vignetting, a colour cast. For each it prints the figures of
`spraycv eval` (IoU, angle MAE / median / p95, frames with a missed nozzle or an extra
plume, readings marked unreliable) as a Markdown table, so a weakness shows as a row that
stands out from `none`.

Usage: python benchmarks/perturbations.py --data datasets/heldout --n 100 [--weights W]
           [NAME ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

from spraycv.evaluation.heldout import RenderedFrame, rendered_frames, summarise
from spraycv.measure import load_measurer
from spraycv.paths import default_weights

Perturbation = Callable[[np.ndarray], np.ndarray]  # (H, W, 3) uint8 -> (H, W, 3) uint8


def _u8(image: np.ndarray) -> np.ndarray:
    return np.clip(image + 0.5, 0, 255).astype(np.uint8)


def jpeg(quality: int) -> Perturbation:
    def apply(im: np.ndarray) -> np.ndarray:
        _, data = cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, quality])
        return cv2.imdecode(data, cv2.IMREAD_COLOR)

    return apply


def noise(sd: float) -> Perturbation:
    """Gaussian noise of `sd` grey levels (seeded: every run sees the same noise)."""
    return lambda im: _u8(im + np.random.default_rng(0).normal(0.0, sd, im.shape))


def tone(gamma: float) -> Perturbation:
    lut = _u8(255.0 * (np.arange(256) / 255.0) ** gamma)
    return lambda im: cv2.LUT(im, lut)


def defocus(sigma: float) -> Perturbation:
    return lambda im: cv2.GaussianBlur(im, (0, 0), sigma)


def low_resolution(scale: float) -> Perturbation:
    def apply(im: np.ndarray) -> np.ndarray:
        h, w = im.shape[:2]
        small = cv2.resize(im, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)

    return apply


def gain(factor: float) -> Perturbation:
    """The gain off: values times `factor`, clipped at 255 (above 1: blown highlights)."""
    return lambda im: _u8(im.astype(np.float32) * factor)


def contrast(factor: float) -> Perturbation:
    return lambda im: _u8((im.astype(np.float32) - 128.0) * factor + 128.0)


def vignette(strength: float) -> Perturbation:
    def apply(im: np.ndarray) -> np.ndarray:
        h, w = im.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w]
        r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
        return _u8(im * (1.0 - strength * r2)[..., None])

    return apply


def colour_cast(bgr: tuple[float, float, float]) -> Perturbation:
    return lambda im: _u8(im.astype(np.float32) * np.asarray(bgr, np.float32))


PERTURBATIONS: dict[str, Perturbation] = {
    "none": lambda im: im,
    "jpeg25": jpeg(25),
    "jpeg10": jpeg(10),
    "noise10": noise(10.0),
    "noise25": noise(25.0),
    "gamma0.5": tone(0.5),
    "gamma2": tone(2.0),
    "blur1.5": defocus(1.5),
    "blur3": defocus(3.0),
    "lowres0.5": low_resolution(0.5),
    "lowres0.33": low_resolution(0.33),
    "gain0.4": gain(0.4),
    "gain1.4": gain(1.4),
    "gain1.8": gain(1.8),
    "contrast0.5": contrast(0.5),
    "vignette0.6": vignette(0.6),
    "cast": colour_cast((0.6, 1.0, 1.3)),
}
SHOWN = ("iou", "angle_mae_deg", "angle_median_deg", "angle_p95_deg",
         "frames_with_missed_frac", "frames_with_extra_frac", "unreliable_nozzles")  # fmt: skip


def perturbed_summary(
    frames: Sequence[RenderedFrame], perturb: Perturbation, measurer
) -> dict[str, float | None]:
    """`spraycv eval`'s summary of the rendered `frames`, each read through `perturb`."""
    results = []
    for frame in frames:
        image = frame.image()
        image = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        results.append(frame.evaluate(perturb(image), measurer)[0])
    return summarise(results)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--weights", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=1)
    choices = ", ".join(PERTURBATIONS)
    ap.add_argument("names", nargs="*", help=f"perturbations (default all): {choices}")
    args = ap.parse_args()
    unknown = sorted(set(args.names) - set(PERTURBATIONS))
    if unknown:
        ap.error(f"unknown perturbation(s) {', '.join(unknown)}; choose from {choices}")
    measurer = load_measurer(args.weights or default_weights(), threads=args.threads)
    frames = rendered_frames(args.data)[: args.n]
    print(f"{args.data}, first {len(frames)} frames, weights {args.weights or default_weights()}")
    print("| perturbation | " + " | ".join(SHOWN) + " |")
    print("|---" * (len(SHOWN) + 1) + "|")
    for name in args.names or PERTURBATIONS:
        summary = perturbed_summary(frames, PERTURBATIONS[name], measurer)
        print(f"| {name} | " + " | ".join(_cell(summary.get(k)) for k in SHOWN) + " |", flush=True)


if __name__ == "__main__":
    main()
