"""The refiner's training loop: a short run on rendered frames, resumed, with and without a
moving average of its weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from spraycv.config.refine import CropBlur, PoseJitter, RefinerTrainConfig
from spraycv.refine.blur import gaussian_kernel
from spraycv.refine.data import CropSource, jittered_pose
from spraycv.refine.train import make_batch, train_refiner
from spraycv.runtime.processing import ModelIO
from spraycv.training.checkpoint import load_checkpoint


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from spraycv.data.synth import write_dataset

    root = tmp_path_factory.mktemp("frames")
    write_dataset(root, 6, size=128, seed=7, workers=1, progress=False)
    return root


@pytest.mark.parametrize("decay", [None, 0.9])
def test_a_run_stops_resumes_and_saves_what_it_validated(frames: Path, tmp_path: Path, decay):
    cfg = dict(name="r", train_data=frames, val_data=frames, init_weights=None, crop_size=32,
               batch_size=2, steps=3, warmup_steps=1, val_crops=10, checkpoint_every_s=1e9,
               out_dir=tmp_path, ema_decay=decay)  # fmt: skip
    files = train_refiner(RefinerTrainConfig(**cfg), log=lambda _: None)
    files = train_refiner(RefinerTrainConfig(**{**cfg, "steps": 5}), log=lambda _: None)
    steps = [json.loads(line)["step"] for line in files.log.read_text().splitlines()]
    assert steps == [3, 5]  # the second run went on from the first one's state
    state = torch.load(files.state, map_location="cpu", weights_only=True)
    assert (state["average"] is None) == (decay is None)
    saved, meta = load_checkpoint(files.last)
    assert meta["step"] == 5 and meta["train_config"]["ema_decay"] == decay
    trained = {k.removeprefix("net."): v for k, v in saved.state_dict().items()}
    key = next(k for k in state["model"] if k.endswith("weight"))
    same = torch.equal(trained[key].float(), state["model"][key].float())
    assert same == (decay is None)  # with an average, the saved weights are not the last ones


def test_a_refiner_trained_with_an_exposure_step_stores_it(frames: Path, tmp_path: Path):
    """The crops' exposure step goes into the refiner's sidecar, so that inference applies
    the same one; a run started from that refiner keeps it unless told otherwise."""
    cfg = dict(name="x", train_data=frames, val_data=frames, init_weights=None, crop_size=32,
               batch_size=2, steps=1, warmup_steps=0, val_crops=10, checkpoint_every_s=1e9,
               out_dir=tmp_path)  # fmt: skip
    first = train_refiner(RefinerTrainConfig(**cfg, exposure={"mode": "stretch_dim"}), log=print)
    _, meta = load_checkpoint(first.last)
    assert meta["normalization"]["exposure"]["mode"] == "stretch_dim"
    assert ModelIO.from_sidecar(meta).exposure.mode == "stretch_dim"
    again = {**cfg, "name": "y", "init_weights": first.last}
    _, kept = load_checkpoint(train_refiner(RefinerTrainConfig(**again), log=print).last)
    assert kept["normalization"]["exposure"]["mode"] == "stretch_dim"


def _detail(x) -> float:
    """Mean absolute step between neighbouring rows of 2 x 2 blocks (the sensor noise added
    after a blur averaged down): less after a blur."""
    x = np.asarray(x, dtype=np.float64)
    h, w = x.shape[-2] // 2 * 2, x.shape[-1] // 2 * 2
    x = x[..., :h, :w]
    blocks = (x[..., ::2, ::2] + x[..., 1::2, ::2] + x[..., ::2, 1::2] + x[..., 1::2, 1::2]) / 4
    return float(np.abs(np.diff(blocks, axis=-2)).mean())


def test_a_blurred_crop_keeps_its_truth(frames: Path):
    source = CropSource(frames)
    target = source.targets[0]
    pose = jittered_pose(target, PoseJitter(), np.random.default_rng(0))
    sharp, truth, transform = source.crop(target, pose, 64)
    soft, soft_truth, soft_transform = source.crop(target, pose, 64, gaussian_kernel(3.0))
    assert np.array_equal(truth, soft_truth) and np.array_equal(transform, soft_transform)
    assert _detail(soft) < 0.8 * _detail(sharp)


def test_blurred_batches_are_smoother(frames: Path):
    source = CropSource(frames)
    io = ModelIO((64, 64), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    detail = {}
    for frac in (0.0, 1.0):
        blur = CropBlur(frac=frac, gaussian_px=(5.0, 5.0), motion_px=(15.0, 15.0))
        cfg = RefinerTrainConfig(train_data=frames, crop_size=64, batch_size=24, blur=blur)
        images, truths, *_ = make_batch(source, cfg, io, np.random.default_rng(3))
        assert images.shape == (24, 3, 64, 64) and truths.shape == (24, 1, 64, 64)
        detail[frac] = _detail(images)
    assert detail[1.0] < 0.8 * detail[0.0]


def test_several_training_sets_are_read_as_one_each_to_its_limit(frames: Path, tmp_path: Path):
    from spraycv.data.synth import write_dataset

    far = tmp_path / "far"
    write_dataset(far, 3, size=192, seed=8, workers=1, progress=False)
    one, other = CropSource(frames), CropSource(far)
    both = CropSource([frames, far], limit=4)
    assert len(both.images) == 4 + 3 and both.images[4].shape[:2] == (192, 192)
    expected = [t for t in one.targets if t.frame < 4]
    assert both.targets[: len(expected)] == expected
    # the second set's nozzles point at its own frames, after the first set's
    moved = [(t.frame + 4, t.instance, t.apex) for t in other.targets]
    assert [(t.frame, t.instance, t.apex) for t in both.targets[len(expected) :]] == moved
    cfg = RefinerTrainConfig(train_data=[frames, far])
    assert cfg.train_data == [frames, far]
    assert RefinerTrainConfig(train_data=str(frames)).train_data == [frames]


def test_an_empty_list_of_training_sets_is_refused():
    with pytest.raises(ValueError, match="train_data"):
        RefinerTrainConfig(train_data=[])


def test_sets_without_a_nozzle_are_refused_by_name(frames: Path, tmp_path: Path):
    record = json.loads((frames / "labels.jsonl").read_text().splitlines()[0])
    bare = {**record, "image": str(frames / record["image"]),
            "instances": str(frames / record["instances"]), "nozzles": []}  # fmt: skip
    (tmp_path / "labels.jsonl").write_text(json.dumps(bare) + "\n")
    with pytest.raises(ValueError, match=f"^{tmp_path}, {tmp_path}: no visible nozzle"):
        CropSource([tmp_path, tmp_path])


def _logits(seed: int, channels: int = 2) -> torch.Tensor:
    return torch.randn(2, channels, 16, 16, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(
    ("distill_weight", "teacher_seed", "apex_weight"),
    [(0.5, 1, 0.0), (2.0, 1, 0.0), (1.0, 2, 0.1), (0.5, None, 0.1)],
)
def test_a_teacher_adds_its_own_loss_by_its_weight(distill_weight, teacher_seed, apex_weight):
    """The batch loss is the truth's, plus distill_weight times the same losses against the
    teacher's probabilities and apex softmax."""
    from spraycv.refine.losses import apex_loss, batch_loss, crop_loss, distill_apex_loss

    logits, truth = _logits(0), (torch.rand(2, 1, 16, 16) > 0.5).float()
    apexes = torch.tensor([[8.0, 3.0], [float("nan"), float("nan")]])
    teacher = None if teacher_seed is None else _logits(teacher_seed)
    cfg = RefinerTrainConfig(
        apex_weight=apex_weight,
        model={"arch": "Unet", "encoder": "tu-tf_mobilenetv3_small_100", "apex_head": True},
        teacher_weights="t.safetensors" if teacher is not None else None,
        distill_weight=distill_weight if teacher is not None else 0.0,
    )
    expected = crop_loss(logits[:, :1], truth, cfg.band_weight)
    if apex_weight:
        expected = expected + apex_weight * apex_loss(logits[:, 1], apexes, cfg.apex_sigma_px)
    if teacher is not None:
        soft = torch.sigmoid(teacher[:, :1])
        expected = expected + distill_weight * crop_loss(logits[:, :1], soft, cfg.band_weight)
        if apex_weight:
            taught = distill_apex_loss(logits[:, 1], teacher[:, 1])
            expected = expected + distill_weight * apex_weight * taught
    got = batch_loss(logits, truth, apexes, cfg, teacher)
    assert float(got) == pytest.approx(float(expected))
    if teacher is not None:
        assert float(got) > float(batch_loss(logits, truth, apexes, cfg, None))


def test_the_apex_softmax_learns_the_teachers_peak():
    """The distilled apex loss is least where the student's softmax is the teacher's."""
    from spraycv.refine.losses import distill_apex_loss

    teacher = _logits(3, 1)[:, 0]
    same = distill_apex_loss(teacher.clone(), teacher)
    assert float(same) < float(distill_apex_loss(_logits(4, 1)[:, 0], teacher))


@pytest.mark.parametrize(
    "settings", [{"distill_weight": 1.0}, {"teacher_weights": "teacher.safetensors"}]
)
def test_distillation_needs_a_teacher_and_a_weight(settings):
    with pytest.raises(ValueError, match="teacher_weights and distill_weight"):
        RefinerTrainConfig(**settings)


def test_rows_left_untaught_learn_the_truth_alone():
    """A teacher counts only on the rows `taught` marks: none marked is the truth's loss,
    all marked is the whole batch taught, and one marked is that row taught alone."""
    from spraycv.refine.losses import batch_loss

    logits, teacher = _logits(0), _logits(1)
    truth, apexes = (torch.rand(2, 1, 16, 16) > 0.5).float(), torch.full((2, 2), float("nan"))
    cfg = RefinerTrainConfig(teacher_weights="t.safetensors", distill_weight=1.0)
    plain = batch_loss(logits, truth, apexes, cfg)
    rows = {mark: torch.tensor(mark) for mark in [(False, False), (True, True), (True, False)]}
    got = {
        mark: float(batch_loss(logits, truth, apexes, cfg, teacher, r)) for mark, r in rows.items()
    }
    assert got[(False, False)] == pytest.approx(float(plain))
    assert got[(True, True)] == pytest.approx(
        float(batch_loss(logits, truth, apexes, cfg, teacher))
    )
    first = batch_loss(logits[:1], truth[:1], apexes[:1], cfg, teacher[:1]) - batch_loss(
        logits[:1], truth[:1], apexes[:1], cfg
    )
    assert got[(True, False)] == pytest.approx(float(plain + first))


def test_a_batch_marks_the_crops_of_untaught_styles(frames: Path):
    """Crops of frames whose style `untaught_styles` names are marked untaught, the rest
    taught."""
    source = CropSource(frames)
    for record in source.records[::2]:  # every other frame of one look, the rest unnamed
        record["style"] = "translucent_sheet"
    io = ModelIO((32, 32), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    cfg = RefinerTrainConfig(train_data=frames, crop_size=32, batch_size=64,
                             teacher_weights="t.safetensors", distill_weight=1.0,
                             untaught_styles=["translucent_sheet"])  # fmt: skip
    rng = np.random.default_rng(5)
    picks = rng.integers(0, len(source.targets), cfg.batch_size)
    batch = make_batch(source, cfg, io, np.random.default_rng(5))
    expected = [str(source.records[source.targets[i].frame].get("style")) not in cfg.untaught_styles
                for i in picks]  # fmt: skip
    assert batch.taught.tolist() == expected
    assert 0 < sum(expected) < len(expected)


@pytest.mark.parametrize(("distill_dice", "still"), [(False, True), (True, False)])
def test_a_student_equal_to_its_teacher_stays_there_without_the_dice(distill_dice, still):
    """The distillation's gradient where the student's logits are the teacher's: zero with
    the weighted BCE alone, not zero with the soft Dice beside it (it sharpens)."""
    from spraycv.refine.losses import batch_loss

    teacher = _logits(6) * 3
    student = teacher.clone().requires_grad_(True)
    cfg = RefinerTrainConfig(teacher_weights="t.safetensors", distill_weight=1.0,
                             distill_dice=distill_dice, apex_weight=0.1,
                             model={"arch": "Unet", "encoder": "tu-tf_mobilenetv3_small_100",
                                    "apex_head": True})  # fmt: skip
    truth, apexes = torch.zeros(2, 1, 16, 16), torch.full((2, 2), float("nan"))
    taught = batch_loss(student, truth, apexes, cfg, teacher)
    plain = batch_loss(student, truth, apexes, cfg)
    (gradient,) = torch.autograd.grad(taught - plain, student)
    assert (float(gradient.abs().max()) < 1e-7) is still


def test_untaught_styles_need_a_teacher():
    with pytest.raises(ValueError, match="untaught_styles needs a teacher"):
        RefinerTrainConfig(untaught_styles=["translucent_sheet"])


def test_a_run_learns_from_a_teacher(frames: Path, tmp_path: Path):
    """A short run distilled from a saved refiner: it trains, validates and saves, and its
    sidecar names the teacher."""
    cfg = dict(train_data=frames, val_data=frames, init_weights=None, crop_size=32,
               batch_size=2, steps=2, warmup_steps=1, val_crops=10, checkpoint_every_s=1e9,
               out_dir=tmp_path)  # fmt: skip
    first = train_refiner(RefinerTrainConfig(name="teacher", **cfg), log=lambda _: None)
    taught = RefinerTrainConfig(
        name="student", teacher_weights=first.last, distill_weight=1.0, **cfg
    )
    files = train_refiner(taught, log=lambda _: None)
    _, meta = load_checkpoint(files.last)
    assert meta["step"] == 2
    assert meta["train_config"]["teacher_weights"] == str(first.last)
    assert np.isfinite(json.loads(files.log.read_text().splitlines()[-1])["loss"])


def test_a_run_trains_in_bf16_and_says_so(frames: Path, tmp_path: Path):
    """A refiner run with bf16 autocast on the CPU: it trains, validates and saves finite
    weights, and its first line names the precision it computes in."""
    lines: list[str] = []
    cfg = RefinerTrainConfig(name="bf", train_data=frames, val_data=frames, init_weights=None,
                             crop_size=32, batch_size=2, steps=2, warmup_steps=1, val_crops=10,
                             checkpoint_every_s=1e9, out_dir=tmp_path,
                             precision="bf16-mixed")  # fmt: skip
    files = train_refiner(cfg, log=lines.append)
    assert "precision bf16-mixed" in lines[0]
    saved, meta = load_checkpoint(files.last)
    assert meta["step"] == 2 and meta["trained_precision"] == "bf16-mixed"
    assert all(torch.isfinite(p).all() for p in saved.parameters())
    assert np.isfinite(json.loads(files.log.read_text().splitlines()[-1])["loss"])
