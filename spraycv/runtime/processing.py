"""Pre- and post-processing, defined once from a model's metadata and shared by every backend."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

import cv2
import numpy as np

from spraycv.io.exposure import Exposure, normalise_exposure

Resize = Literal["stretch", "keep_aspect"]
RESIZE_MODES: tuple[str, ...] = get_args(Resize)
MAX_ASPECT = 4.0  # keep_aspect: a longer side beyond this many shorter sides is squeezed


@dataclass(frozen=True)
class ModelIO:
    """How images go into a model and masks come out (from a checkpoint sidecar).

    `resize` "stretch" resizes every image to `input_size`; "keep_aspect" (a fully
    convolutional graph only) gives the image's shorter side the input's shorter side and
    its longer side in proportion, in multiples of `size_multiple`, so that a 16:9 camera
    frame is not squeezed into a square the network never saw in training.
    """

    input_size: tuple[int, int]  # (H, W) of the network input; keep_aspect: of a square image
    mean: tuple[float, float, float]  # RGB, on [0, 1] pixel values
    std: tuple[float, float, float]
    threshold: float = 0.5
    apex_threshold: float | None = None  # set when the model has an apex head (channel 1)
    exposure: Exposure = field(default_factory=Exposure)  # after the resize, as in training
    resize: Resize = "stretch"
    size_multiple: int = 32  # encoders downsample 5 times
    # read the spray's square again where it spans less than this share of the frame's
    # shorter side (spraycv.runtime.zoom); None: one pass
    zoom_below: float | None = None
    # read the frame again in tiles where every trusted plume is shorter than this share of
    # the shorter side and something is left unexplained (spraycv.runtime.zoom.wants_tiles,
    # spraycv.measure.Measurer); None: never
    tile_short: float | None = None

    def __post_init__(self) -> None:
        if self.resize not in RESIZE_MODES:
            raise ValueError(f"resize must be one of {list(RESIZE_MODES)}, not {self.resize!r}")

    def network_size(self, image_size: tuple[int, int]) -> tuple[int, int]:
        """(h, w) of the network input for an image of (H, W) pixels."""
        if self.resize == "stretch":
            return self.input_size
        height, width = image_size
        short, m = min(self.input_size), self.size_multiple
        aspect = min(max(height, width) / max(min(height, width), 1), MAX_ASPECT)
        long = max(short, round(short * aspect / m) * m)
        return (long, short) if height > width else (short, long)

    @classmethod
    def from_sidecar(cls, meta: dict[str, Any]) -> ModelIO:
        norm = meta["normalization"]
        h, w = meta["input_size"]
        apex = meta.get("apex_threshold")
        return cls(
            (int(h), int(w)),
            tuple(norm["mean"]),
            tuple(norm["std"]),
            meta["threshold"],
            None if apex is None else float(apex),
            Exposure(**norm.get("exposure", {})),  # none: a model from before exposure
            meta.get("resize", "stretch"),  # none: a model from before keep_aspect
            zoom_below=meta.get("zoom_below"),
            tile_short=meta.get("tile_short"),
        )

    def to_sidecar(self) -> dict[str, Any]:
        out = {
            "input_size": list(self.input_size),
            "normalization": {
                "mean": list(self.mean),
                "std": list(self.std),
                "color": "RGB",
                "exposure": asdict(self.exposure),
            },
            "threshold": self.threshold,
            "resize": self.resize,
        }
        if self.apex_threshold is not None:
            out["apex_threshold"] = self.apex_threshold
        if self.zoom_below is not None:
            out["zoom_below"] = self.zoom_below
        if self.tile_short is not None:
            out["tile_short"] = self.tile_short
        return out


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8:
        return image
    raise ValueError(
        f"expected an (H, W, 3) uint8 BGR or (H, W) uint8 image; got {image.dtype} {image.shape}"
    )


def preprocess(images: Sequence[np.ndarray], io: ModelIO) -> np.ndarray:
    """Images -> network input batch.

    Args:
        images: N images, each (H_i, W_i, 3) uint8 BGR or (H_i, W_i) uint8.
    Returns:
        (N, 3, h, w) float32, RGB, resized to `io.network_size` (one size for all N: see
        `same_input_size`), its exposure normalised as `io.exposure` says
        (spraycv.io.exposure), and normalised by mean and std.
    """
    shapes = {io.network_size(image.shape[:2]) for image in images}
    if len(shapes) > 1:
        raise ValueError(f"images of one batch need one network input size; got {sorted(shapes)}")
    h, w = shapes.pop() if shapes else io.input_size
    mean = (np.asarray(io.mean, np.float32) * 255.0)[:, None, None]  # (3, 1, 1)
    inv_std = (1.0 / (np.asarray(io.std, np.float32) * 255.0))[:, None, None]
    batch = np.empty((len(images), 3, h, w), np.float32)
    for i, image in enumerate(images):
        rgb = cv2.cvtColor(_as_bgr(image), cv2.COLOR_BGR2RGB)
        resized = cv2.resize(rgb, (w, h), interpolation=cv2.INTER_AREA)
        resized = normalise_exposure(resized, io.exposure)
        # (x - mean) * inv_std in float32, written straight into the batch's channel-first
        # layout (a transposed copy of an (h, w, 3) float array costs ten times as much)
        np.subtract(resized.transpose(2, 0, 1), mean, out=batch[i], dtype=np.float32)
        np.multiply(batch[i], inv_std, out=batch[i])
    return batch


def same_input_size(images: Sequence[np.ndarray], io: ModelIO) -> list[list[int]]:
    """Indices of `images` grouped by their network input size (first-seen order): each
    group is one batch for `preprocess`."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i, image in enumerate(images):
        groups.setdefault(io.network_size(image.shape[:2]), []).append(i)
    return list(groups.values())


def postprocess(
    logits: np.ndarray, sizes: Sequence[tuple[int, int]], io: ModelIO
) -> list[np.ndarray]:
    """Network logits -> full-resolution masks.

    Args:
        logits: (N, C, h, w) float logits; channel 0 is the mask (1 is an apex heatmap).
        sizes: N original (H_i, W_i).
    Returns:
        N masks, each (H_i, W_i) uint8 {0, 1}. Logits are resized before thresholding so
        that boundaries land between input pixels, not on the coarse grid.
    """
    if logits.ndim != 4 or logits.shape[1] < 1:
        raise ValueError(f"expected logits of shape (N, C, h, w); got {logits.shape}")
    if len(sizes) != logits.shape[0]:
        raise ValueError(f"{logits.shape[0]} logit maps for {len(sizes)} images")
    cut = float(np.log(io.threshold / (1.0 - io.threshold)))  # threshold in logit space
    return [
        upsampled_mask(logit, (height, width), cut)
        for logit, (height, width) in zip(logits[:, 0].astype(np.float32), sizes, strict=True)
    ]


BAND_PIXELS = 1 << 21  # larger outputs are upsampled a band of rows at a time


def upsampled_mask(
    logit: np.ndarray, size: tuple[int, int], cut: float, band_pixels: int = BAND_PIXELS
) -> np.ndarray:
    """A logit map bilinearly enlarged to `size` and thresholded, in bounded memory.

    Args:
        logit: (h, w) float32.
        size: (H, W) of the output.
    Returns:
        (H, W) uint8 {0, 1}: `cv2.resize(logit, (W, H), INTER_LINEAR) > cut`. A 20-megapixel
        photo would need an 80 MB float map at once; above `band_pixels` the rows are
        interpolated a band at a time instead (same pixel-centre weights as cv2.resize).
    """
    height, width = size
    if height * width <= band_pixels:
        full = cv2.resize(logit, (width, height), interpolation=cv2.INTER_LINEAR)
        return (full > cut).astype(np.uint8)
    rows = cv2.resize(logit, (width, logit.shape[0]), interpolation=cv2.INTER_LINEAR)
    src = np.clip((np.arange(height) + 0.5) * (logit.shape[0] / height) - 0.5, 0, None)
    top = np.minimum(src.astype(np.int64), logit.shape[0] - 1)
    below = np.minimum(top + 1, logit.shape[0] - 1)
    frac = (src - top).astype(np.float32)[:, None]
    mask = np.empty((height, width), np.uint8)
    step = max(band_pixels // width, 1)
    for start in range(0, height, step):
        band = slice(start, start + step)
        value = rows[top[band]] * (1 - frac[band]) + rows[below[band]] * frac[band]
        np.greater(value, cut, out=mask[band], casting="unsafe")
    return mask


def apex_points(
    logits: np.ndarray, sizes: Sequence[tuple[int, int]], io: ModelIO
) -> list[np.ndarray]:
    """The points of `apex_peaks`: N float arrays (K_i, 2) of (x, y), strongest first."""
    return [points for points, _ in apex_peaks(logits, sizes, io)]


def apex_peaks(
    logits: np.ndarray, sizes: Sequence[tuple[int, int]], io: ModelIO
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Peaks of the apex heatmap (channel 1) in full-resolution pixels, and how sure the head
    is of each.

    Args:
        logits: (N, C, h, w) float logits.
        sizes: N original (H_i, W_i).
    Returns:
        N pairs: points (K_i, 2) of (x, y), local maxima (5 x 5) above `io.apex_threshold`,
        strongest first, and their heat (K_i,) in (0, 1); (0, 2) and (0,) for a model
        without an apex head.
    """
    if io.apex_threshold is None or logits.ndim != 4 or logits.shape[1] < 2:
        return [(np.zeros((0, 2)), np.zeros(0)) for _ in sizes]
    h, w = logits.shape[2:]
    cut = float(np.log(io.apex_threshold / (1.0 - io.apex_threshold)))
    kernel = np.ones((5, 5), np.uint8)
    out = []
    for heat, (height, width) in zip(logits[:, 1].astype(np.float32), sizes, strict=True):
        peak = (heat >= cv2.dilate(heat, kernel)) & (heat > cut)
        ys, xs = np.nonzero(peak)
        order = np.argsort(-heat[ys, xs])
        ys, xs = ys[order], xs[order]
        # pixel centres, scaled from the network's grid to the image's
        xy = np.stack([(xs + 0.5) * width / w, (ys + 0.5) * height / h], axis=1)
        keep = _apart(xy.astype(np.float64), 0.02 * max(height, width))
        strength = 1.0 / (1.0 + np.exp(-heat[ys[keep], xs[keep]].astype(np.float64)))
        out.append((xy[keep].astype(np.float64).reshape(-1, 2), strength))
    return out


def _apart(points: np.ndarray, radius: float) -> list[int]:
    """Indices of the points (K, 2), strongest first, with no stronger one within `radius`
    (plateaus give twin maxima)."""
    kept: list[int] = []
    for i, p in enumerate(points):
        if all(np.hypot(*(p - points[j])) > radius for j in kept):
            kept.append(i)
    return kept
