"""Write a synthetic dataset folder, in parallel, deterministically.

Layout (`n` samples, index i as a 6-digit stem):

    out/images/000000.jpg      image, BGR (JPEG quality 95, or PNG; with "png16", the raw
                               10-12-bit frames of high-bit-depth styles as 16-bit PNG)
    out/masks/000000.png       spray envelope mask, 0 or 255 (readers threshold > 127)
    out/instances/000000.png   0 = background, k = nozzle index + 1
    out/labels.jsonl           one record per image, in index order, with the relative
                               paths "image", "mask" and "instances" added
    out/dataset.json           spraycv version, seed, n, size, the RenderConfig dump
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from tqdm import tqdm

from spraycv import __version__
from spraycv.config.render import RenderConfig
from spraycv.data.synth.render import RENDERER_VERSION, RenderResult, render_sample

_OUTPUTS = ("images", "masks", "instances", "labels.jsonl", "dataset.json")
# Image format -> (file suffix, imwrite parameters, write the 16-bit raw frame if there is one).
IMAGE_FORMATS: dict[str, tuple[str, list[int], bool]] = {
    "jpg": ("jpg", [cv2.IMWRITE_JPEG_QUALITY, 95], False),
    "png": ("png", [], False),
    "png16": ("png", [], True),
}


def sample_seed(dataset_seed: int, index: int) -> int:
    """The render seed of sample `index`: independent streams, reproducible from the record."""
    state = np.random.SeedSequence([dataset_seed, index]).generate_state(2, np.uint32)
    return int(state[0]) << 21 ^ int(state[1])  # < 2**53: exact in JSON readers everywhere


def save_sample(out: Path, stem: str, res: RenderResult, image_format: str = "jpg") -> dict:
    """Write one sample's image, mask (0/255) and instances under `out`; return its record
    with the relative paths "image", "mask" and "instances" added."""
    suffix, params, raw16 = IMAGE_FORMATS[image_format]
    image_rel = f"images/{stem}.{suffix}"
    _write(out / image_rel, res.image16 if raw16 and res.image16 is not None else res.image, params)
    _write(out / f"masks/{stem}.png", res.mask * np.uint8(255), [])
    _write(out / f"instances/{stem}.png", res.instances, [])
    record = dict(res.record)
    record.update(
        {"image": image_rel, "mask": f"masks/{stem}.png", "instances": f"instances/{stem}.png"}
    )
    return record


def _render_one(job: tuple[int, int, int, int, str, str, dict[str, Any]]) -> dict[str, Any]:
    """Render and write one sample (runs in a worker); returns its record."""
    index, dataset_seed, size, height, image_format, out, cfg = job
    stem = f"{index:06d}"
    seed = sample_seed(dataset_seed, index)
    config = RenderConfig.model_validate(cfg)
    res = render_sample(seed, size, config, height=height, sample_id=stem)
    return save_sample(Path(out), stem, res, image_format)


def _write(path: Path, img: np.ndarray, params: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), img, params):
        raise OSError(f"could not write {path}")


def _init_worker() -> None:
    cv2.setNumThreads(1)  # one process per core: no thread oversubscription


def _records(jobs: list[tuple], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1:
        _init_worker()
        yield from map(_render_one, jobs)
        return
    # forkserver/spawn: workers start clean, whatever threads the parent (OpenCV) runs.
    method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    with mp.get_context(method).Pool(workers, _init_worker) as pool:
        yield from pool.imap(_render_one, jobs, chunksize=4)


def _prepare_folder(out: Path, overwrite: bool) -> None:
    """Make `out`'s dataset folders; a non-empty `out` is refused, or with `overwrite` its
    dataset files (and only those) are removed first."""
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise FileExistsError(
                f"output folder {out} is not empty (use overwrite=True / --overwrite)"
            )
        for name in _OUTPUTS:
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    for sub in ("images", "masks", "instances"):
        (out / sub).mkdir(parents=True, exist_ok=True)


def write_dataset(
    out: Path,
    n: int,
    size: int = 512,
    seed: int = 0,
    workers: int = 0,
    height: int | None = None,
    image_format: str = "jpg",
    config: RenderConfig | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> Path:
    """Render `n` samples into the dataset folder `out` (layout in the module docstring).

    Args:
        size: image width, px (and height unless `height` is given).
        workers: processes; 0 = all cores. The output does not depend on it.
        height: image height, px, for frames that are not square (a camera's 4:3 or 16:9);
            lengths scale with the shorter side, so the sprays fill such frames alike.
        image_format: "jpg" (quality 95), "png", or "png16": PNG, with the raw frames of
            high-bit-depth styles ("hdr") as 16-bit PNG instead of their 8-bit copy.
        overwrite: replace the dataset files of an existing non-empty `out`; without it a
            non-empty `out` is refused.

    Returns:
        `out`.

    Workers are started fresh (forkserver/spawn: forking a process that has used OpenCV's
    thread pool can hang), so a script calling this needs the usual
    `if __name__ == "__main__":` guard.
    """
    if image_format not in IMAGE_FORMATS:
        formats = sorted(IMAGE_FORMATS)
        raise ValueError(f"image_format must be one of {formats}, not {image_format!r}")
    height = size if height is None else height
    if n < 0 or min(size, height) < 64:
        raise ValueError("n must be >= 0, and size and height >= 64")
    out = Path(out)
    _prepare_folder(out, overwrite)
    config = config or RenderConfig()
    cfg = config.model_dump(mode="json")
    workers = workers or os.cpu_count() or 1
    workers = max(1, min(workers, n))
    jobs = [(i, seed, size, height, image_format, str(out), cfg) for i in range(n)]
    meta = {
        "spraycv_version": __version__,
        "renderer_version": RENDERER_VERSION,
        "seed": seed,
        "n": n,
        "size": size,
        **({"height": height} if height != size else {}),  # square sets: as before
        "image_format": image_format,
        "render_config": cfg,
    }
    (out / "dataset.json").write_text(json.dumps(meta, indent=2) + "\n")
    with (out / "labels.jsonl").open("w") as f:
        bar = tqdm(_records(jobs, workers), total=n, desc="synth", unit="img", disable=not progress)
        for record in bar:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
    return out
