"""Ship a trained checkpoint as the default model: weights/default.safetensors (fp16) + card,
and its FP32 ONNX export weights/default.onnx (with the refiner's), which measures by default.

Evaluates the checkpoint end to end on the held-out sets first, so that the model card's
figures are measured, not copied.

Usage:
    python scripts/ship_model.py RUN_DIR/best.safetensors --heldout datasets/heldout \
        --unseen datasets/heldout_unseen --command "spraycv train -c configs/X.yaml"
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spraycv.evaluation.heldout import evaluate_dataset, read_records
from spraycv.evaluation.latency import median_latency_ms
from spraycv.export.exporter import export_shipped
from spraycv.io.images import read_image
from spraycv.paths import SHIPPED_CHECKPOINT, WEIGHTS_DIR
from spraycv.runtime.predictor import TorchPredictor
from spraycv.training.checkpoint import SHIPPED_DTYPE, round_to_shipped, save_checkpoint

CARD = (Path(__file__).parent / "model_card_template.md").read_text()
CHANGELOG = "## Changelog, newest first"


def with_changelog(card: str, previous: str | None) -> str:
    """The new card followed by the changelog: the previous card's head (what was current
    until now) as its newest entry, then the previous card's own entries, so that shipping
    a model never loses the record of those before it."""
    if not previous:
        return card
    head, _, entries = previous.partition(CHANGELOG)
    title, _, body = head.strip("\n").partition("\n")
    body = ("\n" + body.strip()).replace("\n## ", "\n#### ").strip()  # its sections, a level down
    newest = f"### Until this card: {title.lstrip('# ')}\n\n{body}"
    older = entries.strip("\n")
    return f"{card.rstrip()}\n\n{CHANGELOG}\n\n{newest}\n\n{older}".rstrip() + "\n"


def _row(name: str, s: dict) -> str:
    return (
        f"| {name} | {s['frames']:.0f} | {s['nozzles']:.0f} | {s['iou']:.4f} | {s['dice']:.4f} | "
        f"{s['boundary_f1']:.4f} | {s['angle_mae_deg']:.2f} | {s['angle_median_deg']:.2f} | "
        f"{s['angle_p95_deg']:.2f} | {s['frames_with_missed_frac']:.1%} | {s['extra_plumes']:.0f} |"
    )


def _apex(meta: dict) -> str:
    head = meta.get("apex_head")
    if not head:
        return "none"
    val = head.get("validation") or {}
    return (
        f"nozzle-apex heatmap (1/4 resolution, peaks above {meta['apex_threshold']}), trained "
        f"on the frozen model by `spraycv apex-head` on {head['views']} views (images and "
        f"mirrors of `{head['data']}`), {head['epochs']} epochs in {head['seconds'] / 60:.0f} "
        f"min on the CPU; on `datasets/val` recall {val.get('recall', float('nan')):.3f}, "
        f"precision {val.get('precision', float('nan')):.3f}; the masks are unchanged"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights", type=Path)
    ap.add_argument("--heldout", type=Path, required=True)
    ap.add_argument("--unseen", type=Path)
    ap.add_argument("--command", required=True)
    ap.add_argument("--status", default="")
    ap.add_argument("--data", default="rendered sprays (see the training command)")
    ap.add_argument("--init", default="random (offline; no pretrained weights)")
    args = ap.parse_args()
    predictor = TorchPredictor(args.weights)
    round_to_shipped(predictor.model)  # the figures are those of the file that ships
    results = {"heldout": evaluate_dataset(predictor, args.heldout).summary()}
    if args.unseen:
        results["heldout_unseen"] = evaluate_dataset(predictor, args.unseen).summary()
    first = read_image(args.heldout / read_records(args.heldout)[0]["image"])
    latency = median_latency_ms(predictor, first)
    meta = dict(predictor.meta)
    meta.pop("format", None)
    meta["heldout_metrics"] = results
    meta["cpu_latency_ms"] = latency
    out = save_checkpoint(SHIPPED_CHECKPOINT, predictor.model, meta, SHIPPED_DTYPE)
    model, train_cfg = meta["model"], meta["train_config"]
    card = CARD.format(
        arch=model["arch"],
        encoder=model["encoder"],
        params=meta["parameters"] / 1e6,
        h=meta["input_size"][0],
        w=meta["input_size"][1],
        thr=meta["threshold"],
        size_mb=out.stat().st_size / 1e6,
        command=args.command,
        epochs=meta.get("epoch"),
        rows="\n".join(_row(k, v) for k, v in results.items()),
        latency=latency,
        status=args.status,
        apex=_apex(meta),
        data=args.data,
        init=args.init,
        exposure=meta["normalization"].get("exposure", {}).get("mode", "none"),
    )
    card_path = WEIGHTS_DIR / "MODEL_CARD.md"
    previous = card_path.read_text() if card_path.is_file() else None
    card_path.write_text(with_changelog(card, previous))
    export_shipped()
    print(
        json.dumps(
            {"results": results, "latency_ms": latency, "train": train_cfg["name"]}, indent=2
        )
    )


if __name__ == "__main__":
    main()
