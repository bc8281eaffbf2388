"""Renderer audit (issue 13, lever f): can a person see each boundary where the angle is read?

For every visible nozzle of a rendered set, the grey-level step across its true boundary
(median of the pixels 2-4 px inside its own envelope against 2-4 px outside every
envelope, brightest channel) and the noise there (median absolute deviation outside), in
the near-orifice band (5-20 % of the length), the definition's band (10-40 %), the far
field (40-80 %) and the front (80-110 %: the sides' last part and the front's own edge).
The contrast-to-noise ratio says whether the edge is visible: below about 1, a trained
person cannot place it, and the truth there is not learnable. Each side of the axis is also
read alone: a spray lit from one side can show one edge clearly and the other not at all,
and a side no one can see cannot be read (the last column: the weaker side's CNR under 1).

With --eval FRAMES.jsonl (from `spraycv eval`), the nozzles the model missed, and those it
read trusted and more than 10 deg off, are split the same way, to see whether they are the
faint ones.

Usage: python benchmarks/edge_contrast_audit.py --data datasets/heldout [--n 400]
           [--eval runs/eval/X/frames.jsonl]
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import cv2
import numpy as np

from spraycv.evaluation.heldout import read_records
from spraycv.io.images import read_image

BANDS = {"5-20 %": (0.05, 0.2), "10-40 %": (0.1, 0.4), "40-80 %": (0.4, 0.8),
         "front 80-110 %": (0.8, 1.1)}  # fmt: skip
# the front: where the held-out IoU loses most (benchmarks/mask_error_breakdown.py, row 59)
CNR_BINS = (0.0, 1.0, 2.0, 4.0, np.inf)


def ring(mask: np.ndarray, inner: int, outer: int) -> np.ndarray:
    """Pixels between `inner` and `outer` px outside a boolean mask."""

    def grow(r: int) -> np.ndarray:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
        return cv2.dilate(mask.astype(np.uint8), kernel) > 0

    return grow(outer) & ~grow(inner)


def band_region(shape: tuple[int, int], nz: dict, lo: float, hi: float) -> np.ndarray:
    """Pixels whose distance along the nozzle's axis from its apex is within [lo, hi] L."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    (ax, ay), (ux, uy) = nz["apex"], nz["axis"]
    s = (xx - ax) * ux + (yy - ay) * uy
    return (s >= lo * nz["length_px"]) & (s <= hi * nz["length_px"])


def lateral_halves(shape: tuple[int, int], nz: dict) -> tuple[np.ndarray, np.ndarray]:
    """The pixels left (towards n_left = (-uy, ux)) and right of the nozzle's axis line."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    (ax, ay), (ux, uy) = nz["apex"], nz["axis"]
    left = (yy - ay) * ux - (xx - ax) * uy >= 0
    return left, ~left


def edge_contrast(grey: np.ndarray, own: np.ndarray, union: np.ndarray, region: np.ndarray):
    """(step, noise) across one envelope's boundary within `region`; None when too few px."""
    inside = ring(~own, 2, 4) & own & region  # 2-4 px inside the envelope
    outside = ring(union, 2, 4) & region  # 2-4 px outside every envelope
    if inside.sum() < 10 or outside.sum() < 10:
        return None
    out = grey[outside].astype(np.float32)
    noise = 1.4826 * float(np.median(np.abs(out - np.median(out))))
    return abs(float(np.median(grey[inside])) - float(np.median(out))), max(noise, 0.5)


def audit(
    data: Path, n: int, paired: dict[str, set[int]], wrong: set[tuple[str, int]]
) -> list[dict]:
    """One row per visible nozzle: state, style, whether the evaluation (`paired`: frame id
    -> the nozzle indices it paired) missed it or read it far off (`wrong`), and the contrast
    in each band, of both sides and of the weaker side."""
    rows = []
    for r in read_records(data)[:n]:
        image = read_image(data / r["image"])
        grey = image if image.ndim == 2 else image.max(axis=2)
        instances = read_image(data / r["instances"])
        instances = instances if instances.ndim == 2 else instances[..., 0]
        union = instances > 0
        for nz in r["nozzles"]:
            if not nz.get("visible", True):
                continue
            own = instances == nz["index"] + 1
            was_paired = paired.get(str(r["id"]), {nz["index"]})  # not evaluated: not missed
            row = {
                "id": r["id"],
                "state": nz["state"],
                "style": r.get("style", "standard"),
                "missed": nz["index"] not in was_paired,
                "wrong": (str(r["id"]), nz["index"]) in wrong,
            }
            halves = lateral_halves(grey.shape, nz)
            for name, (lo, hi) in BANDS.items():
                region = band_region(grey.shape, nz, lo, hi)
                found = edge_contrast(grey, own, union, region)
                row[name] = None if found is None else found[0] / found[1]
                row[name + " step"] = None if found is None else found[0]
                sides = [edge_contrast(grey, own, union, region & half) for half in halves]
                row[name + " weaker side"] = min(
                    (step / noise for step, noise in filter(None, sides)), default=None
                )
            rows.append(row)
    return rows


def far_off(frames_jsonl: Path | None, limit_deg: float = 10.0) -> set[tuple[str, int]]:
    """(frame id, nozzle index) of the trusted readings more than limit_deg off."""
    if frames_jsonl is None:
        return set()
    frames = [json.loads(line) for line in frames_jsonl.read_text().splitlines()]
    return {(f["id"], n["gt_index"]) for f in frames for n in f["nozzles"]
            if not n["unreliable"] and n["included_error_deg"] is not None
            and abs(n["included_error_deg"]) > limit_deg}  # fmt: skip


def paired_nozzles(frames_jsonl: Path | None) -> dict[str, set[int]]:
    """Frame id -> the indices of the nozzles the evaluation paired with a reading."""
    if frames_jsonl is None:
        return {}
    frames = [json.loads(line) for line in frames_jsonl.read_text().splitlines()]
    return {f["id"]: {n["gt_index"] for n in f["nozzles"]} for f in frames}


def table(rows: list[dict], band: str, label: str) -> None:
    cnr = np.array([r[band] for r in rows if r[band] is not None])
    step = np.array([r[band + " step"] for r in rows if r[band] is not None])
    weaker = np.array([r[band + " weaker side"] for r in rows
                       if r[band + " weaker side"] is not None])  # fmt: skip
    counts = np.histogram(cnr, CNR_BINS)[0]
    shares = " | ".join(f"{100 * c / max(len(cnr), 1):.1f} %" for c in counts)
    print(f"| {label} | {band} | {len(cnr)} | {np.median(step):.1f} | "
          f"{100 * np.mean(step < 5):.1f} % | {shares} | "
          f"{100 * np.mean(weaker < 1.0) if weaker.size else float('nan'):.1f} % |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout"))
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--eval", type=Path, default=None, help="frames.jsonl of spraycv eval")
    args = ap.parse_args()
    rows = audit(args.data, args.n, paired_nozzles(args.eval), far_off(args.eval))
    bins = " | ".join(f"CNR {a:g}-{b:g}" for a, b in itertools.pairwise(CNR_BINS))
    print(f"{args.data}, first {args.n} frames")
    print(f"| nozzles | band | n | median step | step < 5 | {bins} | weaker side CNR < 1 |")
    print("|---|---|---|---|---|" + "---|" * len(CNR_BINS))
    groups = {"all": rows, **{f"state {s}": [r for r in rows if r["state"] == s]
                              for s in sorted({r["state"] for r in rows})}}  # fmt: skip
    if args.eval is not None:
        groups["missed by the model"] = [r for r in rows if r["missed"]]
        groups["read trusted, > 10 deg off"] = [r for r in rows if r["wrong"]]
    for label, group in groups.items():
        for band in BANDS:
            if group:
                table(group, band, label)


if __name__ == "__main__":
    main()
