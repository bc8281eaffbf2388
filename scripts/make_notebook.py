"""Write notebooks/01_walkthrough.ipynb from the cells below.

    python scripts/make_notebook.py            # write the notebook without outputs
    python scripts/make_notebook.py --execute  # write it, run it top to bottom, save outputs

The notebook runs in a temporary folder (its files go to ./walkthrough there), so running
this script leaves only the .ipynb in the repository. Edit the cells here, not in Jupyter:
tests/notebooks/test_walkthrough.py checks that the saved notebook matches this script.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "01_walkthrough.ipynb"
TIMEOUT_S = 600  # per cell

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """# spraycv walkthrough: from rendered sprays to cone angles

This notebook shows the whole path on a laptop CPU in a couple of minutes:

1. **render** a small labelled dataset with the built-in spray renderer,
2. **train** a tiny segmentation model for a few steps,
3. **evaluate** it, the shipped model and the classical threshold baseline on held-out images,
4. **measure** cone angles with the shipped model and compare them with the truth,
5. **plot** annotated overlays and the angle error.

Everything it writes goes to `./walkthrough` next to where the notebook runs. The tiny
model of step 2 is only a demonstration of the training API: a useful model needs
thousands of images and a GPU (the shipped one, `weights/default.safetensors`, was trained
that way; see `weights/MODEL_CARD.md`).""",
    ),
    (
        "code",
        """import json
import warnings
from pathlib import Path

import cv2
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib_inline.backend_inline import set_matplotlib_formats

from spraycv.paths import REPO_ROOT, default_weights

torch.set_num_threads(1)  # small models run fastest on one thread, and results repeat
cv2.setNumThreads(1)
warnings.filterwarnings("ignore", message="IProgress not found")  # no widgets: no bars
set_matplotlib_formats("jpeg")  # photos as JPEG keep the saved notebook small
plt.rcParams["figure.dpi"] = 72
WORK = Path("walkthrough")  # everything this notebook writes goes here
WORK.mkdir(exist_ok=True)
print("shipped model:", default_weights().relative_to(REPO_ROOT))""",
    ),
    (
        "md",
        """## 1. Render a labelled dataset

The renderer draws nozzles (flat fan, hollow and full cone, worn and clogged ones), their
sprays, lighting, backgrounds and camera effects, and writes for every image its exact
spray mask and a ground-truth record per nozzle (included angle, half-angles, apex, axis).
`configs/render/train.yaml` is the style the shipped model was trained on. We render 48
training images and 12 held-out ones, 256 px square, with different seeds.""",
    ),
    (
        "code",
        """from spraycv.config import RenderConfig, TrainConfig, load_config
from spraycv.data.synth import write_dataset

style = load_config(RenderConfig, REPO_ROOT / "configs/render/train.yaml")
TRAIN, HELDOUT = WORK / "train", WORK / "heldout"
for folder, n, seed in ((TRAIN, 48, 0), (HELDOUT, 12, 1)):
    write_dataset(
        folder, n, size=256, seed=seed, workers=1, config=style, overwrite=True, progress=False
    )


def read_labels(folder):
    return [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines()]


train_records, heldout_records = read_labels(TRAIN), read_labels(HELDOUT)
print(f"{len(train_records)} training and {len(heldout_records)} held-out images")
print("nozzles of the first training image:")
for nz in train_records[0]["nozzles"]:
    angle = nz["included_angle_deg"]
    print(f"  {nz['nozzle_type']:<12} {nz['state']:<8} included {angle:6.1f} deg")""",
    ),
    (
        "code",
        """fig, axes = plt.subplots(2, 5, figsize=(12, 5))
for i, (top, bottom) in enumerate(zip(axes[0], axes[1])):
    image = cv2.imread(str(TRAIN / train_records[i]["image"]))
    mask = cv2.imread(str(TRAIN / train_records[i]["mask"]), cv2.IMREAD_GRAYSCALE)
    top.imshow(image[..., ::-1])
    bottom.imshow(mask, cmap="gray")
    top.set_title(f"image {i}")
    bottom.set_title("spray mask")
for ax in axes.flat:
    ax.axis("off")
fig.tight_layout()
plt.show()""",
    ),
    (
        "md",
        """## 2. Train a tiny model

`spraycv train` (or `spraycv.training.loop.train` from Python) takes one config: every
default lives in the schema (`TrainConfig`), and `key=value` overrides change single
values, as on the command line. Here: a small U-Net at 128 px input, 16 short epochs on
the 48 images (a tenth of them split off for validation), on the CPU: about half a
minute. Each epoch writes `metrics.csv` and checkpoints (`best.safetensors` plus a JSON
sidecar that says how to use the weights) under `walkthrough/runs/tiny/`.""",
    ),
    (
        "code",
        """from spraycv.training.loop import train

cfg = load_config(
    TrainConfig,
    None,
    [
        f"train_data={TRAIN}",
        f"out_dir={WORK / 'runs'}",
        "name=tiny",
        "model.encoder=tu-tf_mobilenetv3_small_100",
        "model.kwargs={decoder_channels: [64, 32, 16, 16, 16]}",
        "data.input_size=128",
        "batch_size=4",
        "epochs=16",
        "optim.lr=8e-3",
        "early_stop_patience=null",
        "angle_eval_images=5",
        "workers=0",
        "threads=1",
        "device=cpu",
    ],
)
result = train(cfg, progress=False)
for epoch, row in enumerate(result.history, 1):
    print(f"epoch {epoch}: train loss {row['train_loss']:.3f}, val IoU {row['val_iou']:.3f}")
print("best weights:", result.best_weights)""",
    ),
    (
        "code",
        """epochs = range(1, len(result.history) + 1)
fig, (ax_loss, ax_iou) = plt.subplots(1, 2, figsize=(10, 3))
ax_loss.plot(epochs, [r["train_loss"] for r in result.history], "o-", label="train")
ax_loss.plot(epochs, [r["val_loss"] for r in result.history], "o-", label="validation")
ax_loss.set(xlabel="epoch", ylabel="Dice + BCE loss", title="loss")
ax_loss.legend()
ax_iou.plot(epochs, [r["val_iou"] for r in result.history], "o-")
ax_iou.set(xlabel="epoch", ylabel="IoU", title="validation mask IoU")
fig.tight_layout()
plt.show()""",
    ),
    (
        "md",
        """## 3. Evaluate on held-out images

`evaluate_dataset` runs any segmenter (image in, spray mask out) over a rendered folder,
measures the cone angles on its masks and compares them with the ground truth: mask IoU,
the included-angle error of every nozzle found, and the nozzles missed. We compare the
tiny model, the shipped model and the classical threshold segmenter (no learning). Same
thing on the command line: `spraycv eval --weights W --data walkthrough/heldout`.""",
    ),
    (
        "code",
        """from spraycv.evaluation.heldout import evaluate_dataset
from spraycv.runtime.predictor import load_predictor
from spraycv.segment.classical import segment_classical

segmenters = {
    "classical threshold": segment_classical,
    "tiny model (above)": load_predictor(result.best_weights),
    "shipped model": load_predictor(default_weights()),
}
reports = {name: evaluate_dataset(seg, HELDOUT, progress=False) for name, seg in segmenters.items()}
print(f"{'segmenter':<22}{'IoU':>7}{'angle MAE':>11}{'median':>8}{'missed':>8}  of")
for name, report in reports.items():
    s = report.summary()
    print(
        f"{name:<22}{s['iou']:7.3f}{s['angle_mae_deg']:9.2f} deg{s['angle_median_deg']:8.2f}"
        f"{s['missed_nozzles']:8.0f}  {s['nozzles']:.0f}"
    )""",
    ),
    (
        "md",
        """## 4. Measure cone angles with the shipped model

`measure_image` segments an image and measures every plume: the included angle, the left
and right half-angles from the axis, the axis tilt, the apex and the spray length, with
quality flags. The angle is defined near the orifice (docs/cone_angle.md): straight lines
fitted to the mask's edges between 10 % and 40 % of the spray length. Below, the measured
angles of three held-out images next to the renderer's truth (`match_to_truth` pairs them
by apex distance).""",
    ),
    (
        "code",
        """from spraycv.geometry.matching import match_to_truth
from spraycv.measure import measure_image

shipped = segmenters["shipped model"]
print(f"{'image':<8}{'nozzle':<13}{'true':>7}{'measured':>10}{'error':>8}  flags")
for record in heldout_records[:3]:
    image = cv2.imread(str(HELDOUT / record["image"]))
    mask, measurements = measure_image(image, shipped)
    match = match_to_truth(measurements, record["nozzles"])
    for pair in match.pairs:
        truth, m = record["nozzles"][pair.gt], measurements[pair.meas]
        error = m.included_angle_deg - truth["included_angle_deg"]
        flags = ",".join(f.value for f in m.flags) or "-"
        print(
            f"{record['id']:<8}{truth['nozzle_type']:<13}{truth['included_angle_deg']:7.1f}"
            f"{m.included_angle_deg:10.1f}{error:+8.1f}  {flags}"
        )
    for gt in match.missed:
        print(f"{record['id']:<8}{record['nozzles'][gt]['nozzle_type']:<13} missed")""",
    ),
    (
        "md",
        """## 5. Overlays and the angle error

The overlay shows what the numbers mean: the mask outline, the two fitted boundary lines
(red), the axis and the band where they were fitted (yellow), the apex (green) and the
included angle. `spraycv predict` writes the same pictures for images, folders and videos.""",
    ),
    (
        "code",
        """from spraycv.viz.overlay import draw_overlay

fig, axes = plt.subplots(2, 3, figsize=(12, 8))
for ax, record in zip(axes.flat, heldout_records[:6]):
    image = cv2.imread(str(HELDOUT / record["image"]))
    mask, measurements = measure_image(image, shipped)
    ax.imshow(draw_overlay(image, mask, measurements)[..., ::-1])
    n = sum(m.ok for m in measurements)
    ax.set_title(f"{record['id']}: {n} plume{'s' * (n != 1)} measured")
    ax.axis("off")
fig.tight_layout()
plt.show()""",
    ),
    (
        "code",
        """fig, (ax_scatter, ax_hist) = plt.subplots(1, 2, figsize=(11, 4))
for name in ("shipped model", "tiny model (above)"):
    nozzles = [n for f in reports[name].frames for n in f.nozzles]
    true = [n["included_true_deg"] for n in nozzles]
    measured = [n["included_deg"] for n in nozzles]
    ax_scatter.scatter(true, measured, s=18, label=name)
    errors = reports[name].angle_errors()
    ax_hist.hist(errors, bins=np.arange(0, 32, 2), alpha=0.6, label=name)
ax_scatter.plot([0, 160], [0, 160], "k--", lw=1)
ax_scatter.set(xlabel="true included angle (deg)", ylabel="measured (deg)", title="per nozzle")
ax_scatter.legend()
ax_hist.set(xlabel="|included-angle error| (deg)", ylabel="nozzles", title="angle error")
ax_hist.legend()
fig.tight_layout()
plt.show()""",
    ),
    (
        "md",
        """## Next steps

- Your own photos: label a few dozen (an image + mask folder, COCO or LabelMe; check them
  with `spraycv data check DIR`), then adapt the shipped model to your camera with
  `spraycv finetune --data DIR`: it prints the held-out IoU and angle error before and
  after, and writes a new checkpoint.
- Measure: `spraycv measure photo.jpg` or `spraycv predict folder_or_video`.
- Train properly: `spraycv synth --out datasets/train --n 5000`, then
  `spraycv train --config configs/unet_mobilenetv3_small.yaml` (on a GPU).""",
    ),
]


def build() -> nbformat.NotebookNode:
    """The notebook, without outputs."""
    cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in CELLS]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def execute(nb: nbformat.NotebookNode, workdir: Path, timeout: int = TIMEOUT_S):
    """Run every cell in a fresh kernel with `workdir` as its current folder."""
    from nbclient import NotebookClient

    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    return client.execute()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--execute", action="store_true", help="run it and save the outputs")
    parser.add_argument("--out", type=Path, default=NOTEBOOK)
    args = parser.parse_args()
    nb = build()
    if args.execute:
        with tempfile.TemporaryDirectory(prefix="spraycv-notebook-") as tmp:
            nb = execute(nb, Path(tmp))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
