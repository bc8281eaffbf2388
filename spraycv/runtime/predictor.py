"""One small predictor interface, one class per backend, picked by the weights' file suffix."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from spraycv.formats import MODEL_FORMATS, ModelFormat, load_target
from spraycv.io.exposure import is_blank
from spraycv.runtime.processing import (
    ModelIO,
    apex_peaks,
    postprocess,
    preprocess,
    same_input_size,
)
from spraycv.runtime.turn import points_back
from spraycv.runtime.zoom import (
    PEAK_MERGE,
    merge_peaks,
    paste_apexes,
    paste_mask,
    tile_boxes,
    zoom_box,
)


class ModelLoadError(ValueError):
    """A model file (.onnx, .engine) that is missing, corrupt, truncated or not spraycv's."""


@dataclass(frozen=True)
class Segmentation:
    """One image's mask (H, W) uint8 {0, 1}, likely nozzle apexes (K, 2) in pixels (from the
    model's apex head; K = 0 without one) and the head's heat at each (K,) in (0, 1)."""

    mask: np.ndarray
    apexes: np.ndarray
    apex_strength: np.ndarray | None = None  # None: not known (every peak counts fully)


class Predictor(ABC):
    """Images in, full-resolution binary spray masks out; subclasses only run the network."""

    backend: ClassVar[str]  # its name in reports, records and the bench table

    def __init__(self, io: ModelIO, meta: dict[str, Any]):
        self.io, self.meta = io, meta

    @abstractmethod
    def infer(self, batch: np.ndarray) -> np.ndarray:
        """(N, 3, h, w) float32 network input -> (N, C, h, w) float32 logits (channel 0
        the mask; 1 the apex heatmap of a model with an apex head)."""

    def predict(self, images: Sequence[np.ndarray]) -> list[np.ndarray]:
        """N images ((H, W, 3) uint8 BGR or (H, W) uint8) -> N (H, W) uint8 {0, 1} masks."""
        return [s.mask for s in self._segment(images, apexes=False)]

    def segment(self, images: Sequence[np.ndarray]) -> list[Segmentation]:
        """N images -> N masks with the likely apexes (see Segmentation)."""
        return self._segment(images, apexes=True)

    def _segment(self, images: Sequence[np.ndarray], apexes: bool) -> list[Segmentation]:
        """The first pass, then a second look where the spray is small (`io.zoom_below`)."""
        first = self._one_pass(images, apexes)
        return [self.second_look(im, s, apexes) for im, s in zip(images, first, strict=True)]

    def second_look(
        self, image: np.ndarray, first: Segmentation, apexes: bool = True
    ) -> Segmentation:
        """`first` (the image's first pass) with the square around a spray that fills less
        than `io.zoom_below` of the shorter side read again at the network's input size
        (spraycv.runtime.zoom); `first` itself where there is none."""
        box = None if self.io.zoom_below is None else zoom_box(first.mask, self.io.zoom_below)
        if box is None:
            return first
        y0, y1, x0, x1 = box
        (crop,) = self._one_pass([image[y0:y1, x0:x1]], apexes)
        points, heat = paste_apexes(
            first.apexes, first.apex_strength, box, crop.apexes, crop.apex_strength
        )
        return Segmentation(paste_mask(first.mask, box, crop.mask), points, heat)

    def tiled_look(self, image: np.ndarray) -> Segmentation:
        """The image read again in overlapping tiles at the network's input size (one batch;
        spraycv.runtime.zoom.tile_boxes): their masks united, their apex peaks merged where
        two tiles overlap."""
        boxes = tile_boxes(image.shape[:2])
        tiles = self._one_pass([image[y0:y1, x0:x1] for y0, y1, x0, x1 in boxes], True)
        mask = np.zeros(image.shape[:2], np.uint8)
        for (y0, y1, x0, x1), tile in zip(boxes, tiles, strict=True):
            mask[y0:y1, x0:x1] |= tile.mask
        points = np.concatenate([
            np.asarray(t.apexes, np.float64).reshape(-1, 2) + np.array([x0, y0], np.float64)
            for (y0, _, x0, _), t in zip(boxes, tiles, strict=True)
        ])  # fmt: skip
        heat = None if any(t.apex_strength is None for t in tiles) else np.concatenate(
            [np.asarray(t.apex_strength, np.float64) for t in tiles])  # fmt: skip
        merged, strength = merge_peaks(points, heat, PEAK_MERGE * min(image.shape[:2]))
        return Segmentation(mask, merged, strength)

    def turned_look(self, image: np.ndarray, k: int) -> Segmentation:
        """The image read turned by k quarter turns (`np.rot90`; spraycv.runtime.turn), as
        `segment` reads it, with its mask and apex peaks turned back onto the image."""
        (seg,) = self.segment([np.ascontiguousarray(np.rot90(image, k))])
        mask = np.ascontiguousarray(np.rot90(seg.mask, -k))
        return Segmentation(mask, points_back(seg.apexes, k, image.shape[:2]), seg.apex_strength)

    def _one_pass(self, images: Sequence[np.ndarray], apexes: bool) -> list[Segmentation]:
        """One network call per input size (keep_aspect: images of another shape differ);
        a flat frame (`is_blank`) is not shown to the network: it has no spray."""
        out: list[Segmentation | None] = [
            Segmentation(np.zeros(im.shape[:2], np.uint8), np.zeros((0, 2)), np.zeros(0))
            if is_blank(im)
            else None
            for im in images
        ]
        shown = [i for i, s in enumerate(out) if s is None]
        for part in same_input_size([images[i] for i in shown], self.io):
            group = [shown[k] for k in part]
            batch = [images[i] for i in group]
            logits = self.infer(preprocess(batch, self.io))
            sizes = [im.shape[:2] for im in batch]
            masks = postprocess(logits, sizes, self.io)
            peaks = apex_peaks(logits, sizes, self.io) if apexes else [(None, None)] * len(batch)
            for i, mask, (points, heat) in zip(group, masks, peaks, strict=True):
                out[i] = Segmentation(mask, np.zeros((0, 2)) if points is None else points, heat)
        return out  # type: ignore[return-value]  # every index is in one group

    @property
    def has_apex_head(self) -> bool:
        return self.io.apex_threshold is not None

    def __call__(self, image: np.ndarray) -> np.ndarray:
        """One image -> its mask (so a predictor is a `spraycv.measure.Segmenter`)."""
        return self.predict([image])[0]

    @property
    def name(self) -> str:
        model = self.meta.get("model", {})
        return f"{model.get('arch', '?')}-{model.get('encoder', '?')} ({self.backend})"


class ModulePredictor(Predictor):
    """PyTorch eager on a model in memory (training evaluation, fine-tuning, checkpoints)."""

    backend = "pytorch"

    def __init__(self, model, io: ModelIO, meta: dict[str, Any] | None = None, device="cpu"):
        import torch

        self._torch = torch
        self.model = model
        self.device = torch.device(device)
        super().__init__(io, meta or {})

    def infer(self, batch: np.ndarray) -> np.ndarray:
        with self._torch.inference_mode():
            out = self.model(self._torch.from_numpy(batch).to(self.device))
        return out.float().cpu().numpy()


class TorchPredictor(ModulePredictor):
    """PyTorch eager on a safetensors checkpoint and its JSON sidecar."""

    def __init__(self, weights: Path, device: str = "cpu", threads: int | None = None):
        import torch

        from spraycv.training.checkpoint import load_checkpoint

        if threads is not None:  # torch's pool is per process: this sets it for all models
            torch.set_num_threads(threads)
        model, meta = load_checkpoint(weights, device)
        super().__init__(model, ModelIO.from_sidecar(meta), meta, device)


@dataclass(frozen=True)
class Backend:
    """A predictor class and the suffixes of the files it runs; the class is imported on
    first use, so that importing the runtime never needs onnxruntime or tensorrt."""

    target: str  # "module:Class"
    suffixes: tuple[str, ...]

    def load(self) -> type[Predictor]:
        return load_target(self.target)

    @property
    def name(self) -> str:
        return self.load().backend


def _backends(formats: Sequence[ModelFormat]) -> tuple[Backend, ...]:
    """One backend per predictor class of the format table, with every suffix it runs."""
    suffixes: dict[str, dict[str, None]] = {}  # dicts: ordered sets
    for fmt in formats:
        suffixes.setdefault(fmt.backend, {})[fmt.suffix] = None
    return tuple(Backend(target, tuple(found)) for target, found in suffixes.items())


BACKENDS: tuple[Backend, ...] = _backends(MODEL_FORMATS)


def backend_for(weights: str | Path) -> Backend:
    """The backend row for a weights file's suffix; the error lists valid suffixes."""
    weights = Path(weights)
    for backend in BACKENDS:
        if weights.suffix.lower() in backend.suffixes:
            return backend
    valid = ", ".join(s for b in BACKENDS for s in b.suffixes)
    raise ValueError(f"{weights}: no backend for suffix {weights.suffix!r}; valid: {valid}")


def load_predictor(
    weights: str | Path, device: str = "cpu", threads: int | None = None
) -> Predictor:
    """The predictor for a weights file, chosen by its suffix; the error lists valid suffixes.

    threads: intra-op CPU threads (None: the backend's default); ignored by GPU engines.
    """
    return backend_for(weights).load()(Path(weights), device, threads=threads)
