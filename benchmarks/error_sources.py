"""Where the end-to-end error comes from: the same frames measured three ways.

1. model masks, apex searched from the mask alone;
2. model masks, apex searched with the model's apex-head peaks as a prior (what users get,
   with a model that has an apex head);
3. model masks, the true apexes given as hints (isolates the apex search);
4. ground-truth masks, apex searched (isolates the geometry).

Usage: python benchmarks/error_sources.py --data datasets/heldout --n 150 [--weights W]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from spraycv.evaluation.heldout import read_records
from spraycv.geometry import MeasureHints, measure_cones
from spraycv.geometry.matching import angle_errors, match_to_truth
from spraycv.io.images import read_image, to_binary_mask
from spraycv.measure import with_apex_prior
from spraycv.paths import default_weights
from spraycv.runtime.predictor import load_predictor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout"))
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--weights", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    predictor = load_predictor(args.weights or default_weights(), threads=args.threads)
    records = read_records(args.data)[: args.n]
    ways = (
        "model mask, apex searched",
        "model mask, apex-head prior",
        "model mask, true apexes",
        "true mask, apex searched",
    )
    errors: dict[str, list[float]] = {w: [] for w in ways}
    missed = dict.fromkeys(ways, 0)
    for rec in records:
        truth = rec["nozzles"]
        (seg,) = predictor.segment([read_image(args.data / rec["image"])])
        true_mask = to_binary_mask(read_image(args.data / rec["mask"]))
        apexes = [tuple(n["apex"]) for n in truth if n.get("state") != "off"]
        hinted = MeasureHints(apex=apexes) if apexes else None
        prior = with_apex_prior(None, seg.apexes, seg.apex_strength)  # as the pipeline does
        masks = (seg.mask, seg.mask, seg.mask, true_mask)
        for way, m, hints in zip(ways, masks, (None, prior, hinted, None), strict=True):
            found = measure_cones(m, hints)
            match = match_to_truth(found, truth)
            missed[way] += bool(match.missed)
            errors[way] += [
                angle_errors(found[p.meas], truth[p.gt])["included"] for p in match.pairs
            ]
    print(f"{len(records)} frames of {args.data}, {predictor.name}")
    print(f"{'':28} {'matched':>8} {'MAE':>6} {'median':>7} {'p95':>6} {'frames missed':>14}")
    for way in ways:
        if not errors[way]:
            continue
        e = np.abs(np.asarray(errors[way]))
        e = e[np.isfinite(e)]
        print(
            f"{way:28} {e.size:8d} {e.mean():6.2f} {np.median(e):7.2f} "
            f"{np.percentile(e, 95):6.2f} {100 * missed[way] / len(records):13.1f}%"
        )


if __name__ == "__main__":
    main()
