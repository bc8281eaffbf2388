"""Line-truth round trip (issue 15, deliverable 5): a rendered set's truth written as
lines.json (`spraycv label lines-from-render`), evaluated on line truth with a perfect
"segmenter" (each frame's rendered mask), so only the geometry and the line truth are left.

Prints, over the matched nozzles: the included-angle error on line truth; its largest
difference from the same frames on the renderer's own truth (labels.jsonl); and, with
every nozzle's first line turned outwards by --turn-deg, the mean change of the error
(it should be -turn-deg: a wrong label shows up at its size).

    PYTHONPATH=. .venv/bin/python benchmarks/line_truth_round_trip.py datasets/heldout
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from spraycv.evaluation.heldout import EvalReport, evaluate_dataset, evaluate_frames, read_records
from spraycv.evaluation.line_truth import TruthMasks, labelled_frames
from spraycv.label.lines import (
    LINES_FILE,
    LinesFile,
    lines_from_records,
    save_lines,
    turned_line,
)


def errors(report: EvalReport) -> np.ndarray:
    """(M,) signed included-angle errors of the matched nozzles, frame by frame."""
    return np.array([n["included_error_deg"] for f in report.frames for n in f.nozzles])


def paired_differently(a: EvalReport, b: EvalReport) -> int:
    """How many frames (same order) the two reports pair differently: other missed or extra
    counts, or other nozzles matched."""
    return sum(
        (fa.missed, fa.extra, len(fa.nozzles)) != (fb.missed, fb.extra, len(fb.nozzles))
        for fa, fb in zip(a.frames, b.frames, strict=True)
    )


def with_first_lines_turned(truth: LinesFile, degrees: float) -> LinesFile:
    """Every nozzle's first (left) line turned outwards about its apex."""
    images = {
        key: entry.model_copy(
            update={
                "nozzles": [
                    n.model_copy(
                        update={
                            "lines": (turned_line(n.lines[0], n.cone.apex, degrees), n.lines[1])
                        }
                    )
                    for n in entry.nozzles or []
                ]
            }
        )
        for key, entry in truth.images.items()
    }
    return truth.model_copy(update={"images": images})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--turn-deg", type=float, default=2.0)
    args = parser.parse_args()

    records = read_records(args.dataset)[: args.limit]
    segmenter = TruthMasks(args.dataset, args.limit)
    mask_path = evaluate_dataset(segmenter, args.dataset, args.limit, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.relpath(args.dataset, tmp)
        truth = lines_from_records(records, image_root=root)
        save_lines(Path(tmp) / LINES_FILE, truth)
        line_path = evaluate_frames(labelled_frames(Path(tmp)), segmenter, progress=False)
        save_lines(Path(tmp) / LINES_FILE, with_first_lines_turned(truth, args.turn_deg))
        turned = evaluate_frames(labelled_frames(Path(tmp)), segmenter, progress=False)
    line, mask, wrong = errors(line_path), errors(mask_path), errors(turned)
    ok = np.isfinite(line)
    summary = line_path.summary()
    print(
        json.dumps(
            {
                "frames": len(records),
                "nozzles": int(summary["nozzles"]),
                "matched_with_angles": int(ok.sum()),
                "missed": int(summary["missed_nozzles"]),
                "extra": int(summary["extra_plumes"]),
                "line_truth_abs_error_deg": {
                    "mean": float(np.abs(line[ok]).mean()),
                    "p95": float(np.percentile(np.abs(line[ok]), 95)),
                    "max": float(np.abs(line[ok]).max()),
                    "share_within_0.2": float((np.abs(line[ok]) <= 0.2).mean()),
                },
                "mask_truth_missed_extra": [
                    int(mask_path.summary()["missed_nozzles"]),
                    int(mask_path.summary()["extra_plumes"]),
                ],
                "frames_paired_differently": paired_differently(line_path, mask_path),
                "max_abs_diff_from_mask_truth_deg": float(np.abs(line - mask)[ok].max())
                if line.shape == mask.shape
                else None,
                "turned_label_mean_change_deg": float((wrong - line)[ok].mean()),
                "turn_deg": args.turn_deg,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
