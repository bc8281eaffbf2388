from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import torch
from torch import nn
from training_helpers import TINY

from spraycv.config.apex_head import ApexHeadConfig
from spraycv.config.loader import load_config
from spraycv.config.train import TrainConfig, ViewDistillConfig
from spraycv.io.images import read_image
from spraycv.runtime.processing import ModelIO, preprocess
from spraycv.training.checkpoint import (
    CheckpointError,
    load_checkpoint,
    read_sidecar,
    save_checkpoint,
)
from spraycv.training.loop import train
from spraycv.training.precision import native_bf16
from spraycv.training.teacher import view_average


def tiny_config(data: Path, out: Path, *extra: str) -> TrainConfig:
    return load_config(TrainConfig, None, [f"train_data={data}", f"out_dir={out}", *TINY, *extra])


def test_loss_decreases_and_run_writes_its_files(wedge_data: Path, tmp_path: Path):
    cfg = tiny_config(wedge_data, tmp_path, "epochs=4", "name=tiny", "angle_eval_images=3")
    result = train(cfg, progress=False)
    losses = [row["train_loss"] for row in result.history]
    assert losses[-1] < 0.7 * losses[0], losses
    run = tmp_path / "tiny"
    for name in (
        "best.safetensors",
        "best.json",
        "last.safetensors",
        "metrics.csv",
        "last_state.pt",
    ):
        assert (run / name).is_file(), name
    rows = list(csv.DictReader((run / "metrics.csv").open()))
    assert [int(r["epoch"]) for r in rows] == [1, 2, 3, 4]
    assert {"val_iou", "val_dice", "val_boundary_f1", "train_loss"} <= set(rows[0])
    assert {"val_angle_mae_deg", "val_plumes_missed"} <= set(rows[0])
    sidecar = json.loads((run / "best.json").read_text())
    assert sidecar["model"]["arch"] == "FPN" and sidecar["input_size"] == [64, 64]


def test_resume_continues_where_it_stopped(wedge_data: Path, tmp_path: Path):
    train(tiny_config(wedge_data, tmp_path, "epochs=1", "name=r"), progress=False)
    result = train(
        tiny_config(wedge_data, tmp_path, "epochs=2", "name=r", "resume=true"), progress=False
    )
    assert len(result.history) == 2 and result.epochs_run == 2


def _saved_and_state(run: Path) -> tuple[dict[str, torch.Tensor], dict]:
    from safetensors.torch import load_file

    state = torch.load(run / "last_state.pt", map_location="cpu", weights_only=True)
    return load_file(run / "last.safetensors"), state


@pytest.mark.parametrize("decay", [None, 0.9])
def test_a_run_saves_and_resumes_the_weights_it_validates(
    wedge_data: Path, tmp_path: Path, decay: float | None
):
    """With ema_decay the checkpoints hold the weights' moving average (the trained weights
    stay in the state, to go on from), and a resumed run carries the average on."""
    extra = ["name=avg", f"ema_decay={'null' if decay is None else decay}"]
    first = train(tiny_config(wedge_data, tmp_path, "epochs=1", *extra), progress=False)
    saved, state = _saved_and_state(tmp_path / "avg")
    trained = state["model"]
    average = state["average"] or {}
    kept = {k.removeprefix("module."): v for k, v in average.items() if k != "n_averaged"}
    kept = kept if decay is not None else trained
    assert (state["average"] is None) == (decay is None)
    assert all(torch.equal(saved[k], kept[k].to(saved[k].dtype)) for k in saved)
    moved = max(float((saved[k].float() - trained[k].float()).abs().max()) for k in saved)
    assert (moved > 0) == (decay is not None), moved
    assert all(torch.equal(v, kept[k]) for k, v in first.model.state_dict().items())
    train(tiny_config(wedge_data, tmp_path, "epochs=2", "resume=true", *extra), progress=False)
    _, again = _saved_and_state(tmp_path / "avg")
    if decay is not None:  # one update a step, over both epochs
        assert int(again["average"]["n_averaged"]) == 2 * int(state["average"]["n_averaged"])


def test_a_run_resumed_with_an_average_starts_it_from_the_loaded_weights(
    wedge_data: Path, tmp_path: Path
):
    train(tiny_config(wedge_data, tmp_path, "epochs=1", "name=late"), progress=False)
    _, before = _saved_and_state(tmp_path / "late")
    extra = ["epochs=2", "name=late", "resume=true", "ema_decay=0.999"]
    train(tiny_config(wedge_data, tmp_path, *extra), progress=False)
    saved, after = _saved_and_state(tmp_path / "late")
    steps = int(after["average"]["n_averaged"])
    assert steps > 0 and steps * 2 == int(after["optimizer"]["state"][0]["step"])
    # at decay 0.999 the average stays next to the weights it started from: epoch 1's
    start, now = before["model"], after["model"]
    key = next(
        k for k in saved if saved[k].is_floating_point() and not torch.equal(start[k], now[k])
    )
    assert float((saved[key] - start[key]).abs().max()) < float((now[key] - start[key]).abs().max())


def test_init_weights_starts_from_a_checkpoint(wedge_data: Path, tmp_path: Path):
    first = train(tiny_config(wedge_data, tmp_path, "epochs=2", "name=first"), progress=False)
    zero = tiny_config(wedge_data, tmp_path, "epochs=1", "name=zero", "optim.lr=1e-12")
    fresh = train(zero, progress=False)
    tuned = train(
        zero.model_copy(update={"name": "tuned", "init_weights": first.best_weights}),
        progress=False,
    )
    start, _ = load_checkpoint(first.best_weights)
    (after, _), (scratch, _) = (load_checkpoint(r.best_weights) for r in (tuned, fresh))
    key = next(k for k in start.state_dict() if k.endswith("weight"))
    # with no learning to speak of, the run ends where it started: the checkpoint's weights
    torch.testing.assert_close(after.state_dict()[key], start.state_dict()[key], atol=1e-6, rtol=0)
    assert not torch.allclose(scratch.state_dict()[key], start.state_dict()[key])
    other = zero.model_copy(update={"init_weights": first.best_weights})
    other.model = other.model.model_copy(update={"arch": "Unet"})
    with pytest.raises(ValueError, match="differs from the config"):
        train(other, progress=False)


def test_same_seed_same_weights(wedge_data: Path, tmp_path: Path):
    a = train(tiny_config(wedge_data, tmp_path, "epochs=1", "name=a"), progress=False)
    b = train(tiny_config(wedge_data, tmp_path, "epochs=1", "name=b"), progress=False)
    (ma, _), (mb, _) = load_checkpoint(a.best_weights), load_checkpoint(b.best_weights)
    for (k, va), vb in zip(ma.state_dict().items(), mb.state_dict().values(), strict=True):
        torch.testing.assert_close(va, vb, msg=k)


def test_checkpoint_round_trip_and_errors(wedge_data: Path, tmp_path: Path):
    from spraycv.config.train import ModelConfig
    from spraycv.models import create_model

    model = create_model(ModelConfig(arch="FPN", encoder="mobilenet_v2")).eval()
    side = {
        "model": ModelConfig(arch="FPN", encoder="mobilenet_v2").model_dump(mode="json"),
        "input_size": [64, 64],
        "normalization": {"mean": [0.5] * 3, "std": [0.5] * 3},
        "threshold": 0.5,
    }
    path = save_checkpoint(tmp_path / "m.safetensors", model, side)
    loaded, _ = load_checkpoint(path)
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), model(x))
    half = save_checkpoint(tmp_path / "h.safetensors", model, side, dtype=torch.float16)
    assert half.stat().st_size < 0.6 * path.stat().st_size
    # a float32 checkpoint's own sidecar, written again as float16 (scripts/ship_refiner.py)
    _, meta = load_checkpoint(path)
    again = save_checkpoint(tmp_path / "s.safetensors", model, meta, dtype=torch.float16)
    assert load_checkpoint(again)[1]["weights_dtype"] == "float16"
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(path.read_bytes()[:1000])
    (tmp_path / "cut.json").write_text((tmp_path / "m.json").read_text())
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_checkpoint(cut)
    (tmp_path / "m.json").unlink()
    with pytest.raises(CheckpointError, match=r"sidecar m\.json not found"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="not found"):
        load_checkpoint(tmp_path / "none.safetensors")
    export = tmp_path / "m.onnx"  # e.g. weights/default.onnx handed to finetune
    export.write_bytes(b"onnx")
    with pytest.raises(CheckpointError, match=r"m\.onnx: not a \.safetensors checkpoint"):
        load_checkpoint(export)
    with pytest.raises(CheckpointError, match="missing 'threshold'"):
        save_checkpoint(
            tmp_path / "x.safetensors", model, {"model": {}, "input_size": 1, "normalization": 1}
        )


def test_fp16_on_cpu_is_refused(wedge_data: Path, tmp_path: Path):
    with pytest.raises(ValueError, match="16-mixed needs a CUDA GPU"):
        train(tiny_config(wedge_data, tmp_path, "epochs=1", "precision=16-mixed", "device=cpu"))


@pytest.mark.parametrize(("precision", "trained"), [
    ("bf16-mixed", "bf16-mixed"),
    ("32", "32"),
    ("auto", "bf16-mixed" if native_bf16(torch.device("cpu")) else "32"),
])  # fmt: skip
def test_a_run_on_the_cpu_trains_and_records_its_precision(
    wedge_data: Path, tmp_path: Path, precision: str, trained: str
):
    result = train(
        tiny_config(wedge_data, tmp_path, "epochs=1", f"precision={precision}", "name=p"),
        progress=False,
    )
    assert result.history[0]["train_loss"] > 0
    _, sidecar = load_checkpoint(result.best_weights)
    assert sidecar["trained_precision"] == trained
    assert sidecar["train_config"]["precision"] == precision


def _apex_probabilities(weights: Path, images: torch.Tensor) -> torch.Tensor:
    model, _ = load_checkpoint(weights)
    with torch.no_grad():
        return torch.sigmoid(model.eval()(images)[:, 1])


def test_apex_distill_trains_the_head_and_keeps_its_heatmap(wedge_data: Path, tmp_path: Path):
    """A fine-tune moves the decoder under a frozen apex head, and the heatmap drifts; with
    `apex_distill` the head trains with the decoder and its heatmap stays closer to where it
    was (BatchNorm frozen, so that the student and its teacher normalise alike)."""
    head = ("model.apex_head=true",)
    first = train(tiny_config(wedge_data, tmp_path, "epochs=1", "name=first", *head), False)
    # a head whose heatmap depends on the features (a fresh one is nearly flat): a trained
    # head's stand-in
    model, sidecar = load_checkpoint(first.best_weights)
    with torch.no_grad():
        model.apex.out.weight.mul_(30.0)
    start_weights = tmp_path / "start.safetensors"
    save_checkpoint(start_weights, model, sidecar)
    tune = (
        "epochs=6",
        "optim.lr=0.002",
        "freeze_batchnorm=true",
        f"init_weights={start_weights}",
        *head,
    )
    frozen = train(tiny_config(wedge_data, tmp_path, "name=frozen", *tune), progress=False)
    kept = train(tiny_config(wedge_data, tmp_path, "name=kept", "apex_distill=60", *tune), False)
    last = {"start": start_weights}
    last.update(
        {name: r.run_dir / "last.safetensors" for name, r in (("frozen", frozen), ("kept", kept))}
    )
    params = {name: load_checkpoint(path)[0].state_dict() for name, path in last.items()}
    head_keys = [k for k in params["start"] if ".apex." in f".{k}" and k.endswith("weight")]
    assert head_keys
    for k in head_keys:
        torch.testing.assert_close(params["frozen"][k], params["start"][k])
    assert any(not torch.equal(params["kept"][k], params["start"][k]) for k in head_keys)
    io = ModelIO.from_sidecar(sidecar)
    paths = sorted((wedge_data / "images").iterdir())[:8]
    images = torch.from_numpy(preprocess([read_image(p) for p in paths], io))
    before = _apex_probabilities(last["start"], images)
    drift = {
        name: float((_apex_probabilities(last[name], images) - before).abs().mean())
        for name in ("frozen", "kept")
    }
    # 0.35 x at 1 thread and 0.38 x at 2 (at apex_distill=20: 0.60 x at 1 thread and 0.43 x
    # at 2, the one-thread run on the bound); Adam's steps at a large lr would swamp it
    assert drift["kept"] < 0.6 * drift["frozen"], drift


def _mirror_gap(weights: Path, images: torch.Tensor) -> float:
    """Mean |p(x) - mirror(p(mirror(x)))| of the mask probabilities: how far a network is
    from agreeing with its own mirror image."""
    model, _ = load_checkpoint(weights)
    with torch.no_grad():
        plain = torch.sigmoid(model.eval()(images)[:, 0])
        mirrored = torch.sigmoid(model(images.flip(-1))[:, 0]).flip(-1)
    return float((plain - mirrored).abs().mean())


def test_view_distill_learns_the_mirror_average(wedge_data: Path, tmp_path: Path):
    """With `view_distill` (the mirror view) alone (the truth's losses off) a fine-tune pulls
    the network towards its starting copy's mean over each image and its mirror, so the
    network comes to agree with its own mirror image; the same fine-tune without it does not."""
    first = train(tiny_config(wedge_data, tmp_path, "epochs=1", "name=first"), False)
    model, sidecar = load_checkpoint(first.best_weights)
    spatial = [m for m in model.modules() if isinstance(m, nn.Conv2d) and m.kernel_size[1] > 1]
    with torch.no_grad():  # an uneven start: the last spatial kernel made lopsided
        spatial[-1].weight[..., -1].add_(spatial[-1].weight.abs().mean())
    start = save_checkpoint(tmp_path / "start.safetensors", model, sidecar)
    tune = (
        "epochs=4",
        "optim.lr=0.002",
        "freeze_batchnorm=true",
        f"init_weights={start}",
        "loss.bce_weight=0",
        "loss.dice_weight=0.001",
    )
    plain = train(tiny_config(wedge_data, tmp_path, "name=plain", *tune), False)
    kept = train(
        tiny_config(wedge_data, tmp_path, "name=kept", "view_distill.weight=1", *tune), False
    )
    io = ModelIO.from_sidecar(sidecar)
    paths = sorted((wedge_data / "images").iterdir())[:8]
    images = torch.from_numpy(preprocess([read_image(p) for p in paths], io))
    gap = {
        "start": _mirror_gap(start, images),
        "plain": _mirror_gap(plain.run_dir / "last.safetensors", images),
        "kept": _mirror_gap(kept.run_dir / "last.safetensors", images),
    }
    assert gap["kept"] < 0.5 * min(gap["start"], gap["plain"]), gap


def _styled_copy(data: Path, root: Path, style_of) -> Path:
    """A copy of a mask folder with a labels.jsonl naming each image's render style."""
    shutil.copytree(data, root)
    images = sorted((root / "images").iterdir())
    lines = [json.dumps({"image": f"images/{p.name}", "style": style_of(i)})
             for i, p in enumerate(images)]  # fmt: skip
    (root / "labels.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_untaught_styles_leave_their_frames_to_the_truth(wedge_data: Path, tmp_path: Path):
    """A view_distill fine-tune whose every frame is of an untaught style trains exactly as
    one without a teacher; naming another style, the teacher counts again. (Unet: no
    dropout, so building the teacher's copy leaves the run's random stream as it was.)"""
    unet = "model.arch=Unet"
    first = train(tiny_config(wedge_data, tmp_path, unet, "epochs=1", "name=first"), False)
    data = _styled_copy(wedge_data, tmp_path / "styled", lambda i: "translucent_sheet")
    tune = (unet, "epochs=2", "optim.lr=0.002", "freeze_batchnorm=true", "loss.dice_weight=0.1",
            f"init_weights={first.best_weights}")  # fmt: skip
    runs = {
        name: train(tiny_config(data, tmp_path, f"name={name}", *tune, *extra), False)
        for name, extra in {
            "plain": (),
            "untaught": ("view_distill.weight=5", "untaught_styles=[translucent_sheet]"),
            "taught": ("view_distill.weight=5", "untaught_styles=[outdoor_sun]"),
        }.items()
    }
    weights = {n: load_checkpoint(r.run_dir / "last.safetensors")[0].state_dict()
               for n, r in runs.items()}  # fmt: skip
    same = [torch.equal(weights["plain"][k], weights["untaught"][k]) for k in weights["plain"]]
    moved = [torch.equal(weights["plain"][k], weights["taught"][k]) for k in weights["plain"]]
    assert all(same) and not all(moved)


def test_a_training_set_marks_the_frames_of_untaught_styles(wedge_data: Path, tmp_path: Path):
    from spraycv.training.data import make_datasets, make_splits

    data = _styled_copy(wedge_data, tmp_path / "styled", lambda i: "sheet" if i % 3 else None)
    cfg = tiny_config(data, tmp_path, f"val_data={wedge_data}", f"init_weights={data}",
                      "view_distill.weight=1", "untaught_styles=[sheet]")  # fmt: skip
    splits = make_splits(cfg)
    train_set, val_set = make_datasets(cfg, splits)
    marks = [bool(train_set[i][2]) for i in range(len(train_set))]
    assert marks == [int(s.image_path.stem) % 3 == 0 for s in splits.train]
    assert len(val_set[0]) == 2  # validation items carry no marks


def test_untaught_styles_need_a_teacher() -> None:
    with pytest.raises(ValueError, match="untaught_styles needs a teacher"):
        load_config(TrainConfig, None, ["untaught_styles=[translucent_sheet]"])


def test_view_distill_needs_a_start_and_positive_scales() -> None:
    with pytest.raises(ValueError, match="view_distill learns a trained model"):
        load_config(TrainConfig, None, ["view_distill.weight=1.0"])
    with pytest.raises(ValueError, match=r"view_distill\.scales must be positive"):
        load_config(TrainConfig, None, ["init_weights=w.safetensors", "view_distill.scales=[1,0]"])


@pytest.mark.parametrize(
    ("scales", "mirror", "views"),
    [([1.0], False, 1), ([1.0], True, 2), ([1.0, 1.25], True, 4), ([0.8, 1.25, 1.5], False, 3)],
)
def test_view_average_reads_each_view_at_its_size_and_maps_it_back(
    scales: list[float], mirror: bool, views: int
) -> None:
    """Each view is a size the network takes (a multiple of 32), its logits come back at the
    batch's size and in its orientation; a network that reads columns sees the mirror."""
    seen: list[tuple[int, ...]] = []

    def column_index(x: torch.Tensor) -> torch.Tensor:  # logit = x-coordinate in [0, 1]
        seen.append(tuple(x.shape[-2:]))
        return torch.linspace(0, 1, x.shape[-1]).expand(len(x), 1, *x.shape[-2:])

    views_cfg = ViewDistillConfig(scales=scales, mirror=mirror)
    out = view_average(column_index, torch.zeros(2, 3, 64, 96), views_cfg, 32)
    assert out.shape == (2, 1, 64, 96) and len(seen) == views
    assert all(h % 32 == 0 and w % 32 == 0 for h, w in seen), seen
    centre = float(out[0, 0, 0, 48])
    assert centre == pytest.approx(0.5, abs=0.02)
    left_to_right = float(out[0, 0, 0, -1] - out[0, 0, 0, 0])
    assert left_to_right == pytest.approx(0.0 if mirror else 1.0, abs=0.05)
    # the unresized view handed over (the run's apex teacher has it) is not run again
    images = torch.zeros(2, 3, 64, 96)
    seen.clear()
    again = view_average(column_index, images, views_cfg, 32, plain=column_index(images))
    assert len(seen) == 1 + views - (1.0 in scales)
    torch.testing.assert_close(again, out)


def test_a_model_with_a_head_keeps_its_apex_threshold(wedge_data: Path, tmp_path: Path):
    """Checkpoints of a model with an apex head carry the peak threshold that inference
    needs to read the head: the starting model's when fine-tuned, the default otherwise; a
    model without a head carries none. The starting model's second look at small sprays
    (`zoom_below`) is carried the same way; a model from scratch reads in one pass."""
    head = ("epochs=1", "model.apex_head=true")
    plain = train(tiny_config(wedge_data, tmp_path, "epochs=1", "name=plain"), False)
    first = train(tiny_config(wedge_data, tmp_path, "name=first", *head), False)
    assert "apex_threshold" not in read_sidecar(plain.best_weights)
    assert read_sidecar(first.best_weights)["apex_threshold"] == ApexHeadConfig().threshold
    assert "zoom_below" not in read_sidecar(first.best_weights)
    model, sidecar = load_checkpoint(first.best_weights)
    start = save_checkpoint(
        tmp_path / "start.safetensors",
        model,
        {**sidecar, "apex_threshold": 0.35, "zoom_below": 0.4},
    )
    tuned = train(
        tiny_config(wedge_data, tmp_path, "name=tuned", f"init_weights={start}", *head), False
    )
    for name in ("best.json", "last.json"):
        sidecar = json.loads((tuned.run_dir / name).read_text())
        assert (sidecar["apex_threshold"], sidecar["zoom_below"]) == (0.35, 0.4)


def test_apex_distill_needs_a_head_and_a_start() -> None:
    with pytest.raises(ValueError, match="apex_distill keeps a trained apex head"):
        load_config(TrainConfig, None, ["apex_distill=1.0", "model.apex_head=true"])
    with pytest.raises(ValueError, match="apex_distill keeps a trained apex head"):
        load_config(TrainConfig, None, ["apex_distill=1.0", "init_weights=w.safetensors"])
