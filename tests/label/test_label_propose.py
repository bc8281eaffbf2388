"""propose_labels (with a stand-in model) and `spraycv label propose` (the shipped model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.data.formats.labelme import load_labelme
from spraycv.label import propose_labels

REPO = Path(__file__).resolve().parents[2]
SAMPLE_IMAGES = REPO / "data" / "samples" / "images"
WEIGHTS = REPO / "weights" / "default.safetensors"
runner = CliRunner()


def bright(image: np.ndarray) -> np.ndarray:
    """A stand-in model: the bright pixels are spray."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return (gray > 128).astype(np.uint8)


def _photo(path: Path, gray: bool = False, empty: bool = False) -> Path:
    image = np.full((48, 64), 40, np.uint8)
    if not empty:
        cv2.fillPoly(image, [np.array([[32, 4], [8, 44], [56, 44]], np.int32)], 220)
        cv2.circle(image, (32, 32), 4, 40, -1)  # a hole
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), image if gray else cv2.merge([image] * 3))
    return path


def _masks(folder: Path) -> dict[str, np.ndarray]:
    return {s.id: s.load()[1] for s in load_labelme(folder)}


def test_writes_labelme_files_that_import_back_exactly(tmp_path: Path) -> None:
    paths = [_photo(tmp_path / "a.png"), _photo(tmp_path / "b.png", gray=True)]
    paths.append(_photo(tmp_path / "c.png", empty=True))
    report = propose_labels(paths, bright)
    assert [t.name for _, t in report.written] == ["a.json", "b.json", "c.json"]
    assert report.summary() == "3 written, 0 skipped (label file exists), 0 failed"
    content = json.loads((tmp_path / "a.json").read_text())
    assert content["imagePath"] == "a.png" and content["imageHeight"] == 48
    assert {s["label"] for s in content["shapes"]} == {"spray"}
    assert json.loads((tmp_path / "c.json").read_text())["shapes"] == []  # nothing found
    for stem, mask in _masks(tmp_path).items():
        assert np.array_equal(mask, bright(cv2.imread(str(tmp_path / f"{stem}.png")))), stem


def test_skips_existing_labels_unless_overwrite(tmp_path: Path) -> None:
    a, b = _photo(tmp_path / "a.png"), _photo(tmp_path / "b.jpg")
    (tmp_path / "a.json").write_text('{"corrected": "by hand"}')
    seen: list[tuple[str, str]] = []
    report = propose_labels([a, b], bright, on_result=lambda o, p, d: seen.append((o, p.name)))
    assert report.skipped == [a] and [p for p, _ in report.written] == [b]
    assert seen == [("skipped", "a.png"), ("written", "b.jpg")]
    assert (tmp_path / "a.json").read_text() == '{"corrected": "by hand"}'
    report = propose_labels([a, b], bright, overwrite=True, label="plume")
    assert len(report.written) == 2 and not report.skipped
    assert json.loads((tmp_path / "a.json").read_text())["shapes"][0]["label"] == "plume"


def test_an_unreadable_image_is_reported_and_the_rest_labelled(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8 not a jpeg")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    paths = [broken, _photo(tmp_path / "good.png"), empty, tmp_path / "gone.png"]
    report = propose_labels(paths, bright)
    assert [p.name for p, _ in report.written] == ["good.png"]
    reasons = {p.name: why for p, why in report.failed}
    assert "not a readable image" in reasons["broken.jpg"]
    assert "file is empty" in reasons["empty.png"]
    assert "no such file" in reasons["gone.png"]
    assert not (tmp_path / "broken.json").exists()


def test_two_photos_with_one_stem_do_not_share_a_label_file(tmp_path: Path) -> None:
    first, second = _photo(tmp_path / "a.png"), _photo(tmp_path / "a.jpg")
    report = propose_labels([first, second], bright)
    assert [p for p, _ in report.written] == [first]
    [(path, why)] = report.failed
    assert path == second and "a.json is already the label file of a.png" in why


def test_a_failing_model_fails_only_that_image(tmp_path: Path) -> None:
    def flaky(image: np.ndarray) -> np.ndarray:
        if image.ndim == 2:
            raise RuntimeError("model cannot run on this input")
        return bright(image)

    paths = [_photo(tmp_path / "a.png", gray=True), _photo(tmp_path / "b.png")]
    report = propose_labels(paths, flaky)
    assert [p.name for p, _ in report.written] == ["b.png"]
    assert "model cannot run" in report.failed[0][1]


# --- the command, with the shipped model -------------------------------------------------


@pytest.fixture(scope="module")
def predictor(one_torch_thread: None):
    from spraycv.runtime.predictor import load_predictor

    if not WEIGHTS.is_file():
        pytest.skip("no shipped model")
    return load_predictor(WEIGHTS)


def test_cli_proposals_import_back_as_the_model_masks(
    tmp_path: Path, predictor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPRAYCV_WEIGHTS", raising=False)  # the default: the shipped model
    names = sorted(p.name for p in SAMPLE_IMAGES.glob("*.jpg"))[:4]
    for name in names:
        shutil.copy(SAMPLE_IMAGES / name, tmp_path / name)
    (tmp_path / "broken.png").write_bytes(b"not an image")

    result = runner.invoke(app, ["label", "propose", str(tmp_path)])
    assert result.exit_code == 1, result.output  # the broken file; the others are labelled
    assert "broken.png" in result.output and "not a readable image" in result.output
    assert f"{len(names)} written, 0 skipped (label file exists), 1 failed" in result.stdout

    masks = _masks(tmp_path)
    assert sorted(masks) == sorted(Path(n).stem for n in names)
    for name in names:
        proposed = predictor(cv2.imread(str(tmp_path / name)))
        back = masks[Path(name).stem]
        iou = (proposed & back).sum() / (proposed | back).sum()
        print(f"{name}: {int(proposed.sum())} spray px, label round-trip IoU {iou:.5f}")
        assert iou >= 0.99

    (tmp_path / "broken.png").unlink()
    result = runner.invoke(app, ["label", "propose", str(tmp_path)])
    assert result.exit_code == 0 and f"0 written, {len(names)} skipped" in result.stdout
    result = runner.invoke(app, ["label", "propose", str(tmp_path), "--overwrite"])
    assert result.exit_code == 0 and f"{len(names)} written, 0 skipped" in result.stdout


@pytest.mark.parametrize(
    ("setup", "args", "code", "message"),
    [
        ("file", [], 2, "not a folder"),
        ("empty", [], 2, "no images in"),  # nothing to label: a bad request
        ("photo", ["--weights", "model.pt"], 2, "cannot load the model"),
        ("photo", ["--weights", "missing.safetensors"], 2, "cannot load the model"),
    ],
)
def test_cli_errors(tmp_path: Path, setup: str, args: list[str], code: int, message: str) -> None:
    target = tmp_path / "photos"
    if setup == "file":
        target = _photo(tmp_path / "a.png")
    else:
        target.mkdir()
        if setup == "photo":
            _photo(target / "a.png")
    result = runner.invoke(app, ["label", "propose", str(target), *args])
    assert result.exit_code == code, result.output
    assert message in " ".join(result.output.replace("│", " ").split())  # rich boxes wrap
