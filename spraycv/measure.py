"""From an image or mask file to cone measurements: the pipeline behind `spraycv measure`."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import cv2
import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry import ConeMeasurement, MeasureHints, measure_cones
from spraycv.geometry.confidence import assess
from spraycv.geometry.plume_shape import shaped_mask
from spraycv.geometry.types import QualityFlag
from spraycv.io.exposure import exposure_note
from spraycv.io.images import (
    ImageReadError,
    grey_levels,
    looks_like_mask,
    read_image,
    to_binary_mask,
)
from spraycv.refine.recover import along_boom, near_apex_of, recover_missed
from spraycv.runtime.turn import turn_down
from spraycv.runtime.zoom import wants_tiles, zoom_box
from spraycv.segment.classical import segment_classical

if TYPE_CHECKING:
    from spraycv.refine.stage import Refiner

Segmenter = Callable[[np.ndarray], np.ndarray]
"""(H, W, 3) uint8 BGR image -> (H, W) uint8 {0, 1} spray mask."""

InputKind = Literal["auto", "image", "mask"]

MASK_LIKE_LEVELS = 16
"""A single-channel photo with this few grey levels may be a mask saved oddly: say so."""


@dataclass
class FileResult:
    """Measurements of one file, or the reason it could not be measured."""

    source: Path
    kind: Literal["image", "mask"] | None = None
    image: np.ndarray | None = None
    mask: np.ndarray | None = None
    measurements: list[ConeMeasurement] = field(default_factory=list)
    error: str | None = None  # one line, naming the file
    notes: list[str] = field(default_factory=list)  # how an ambiguous file was read, and why


def with_new_plumes(first: Reading, tiled: Reading, hints: MeasureHints | None) -> Reading:
    """`first` with the trusted plumes that only `tiled` reads (no trusted first reading's
    apex explains theirs): each replaces the untrusted first readings of its nozzle, and its
    component of the tiled mask is added. What the first reading trusts never moves (a plume
    read again at another scale reads a little differently; experiments row 153)."""
    trusted = [m for m in first.measurements if not m.unreliable]
    new = [m for m in tiled.measurements
           if m.reliable and not any(_same_nozzle(m, t) for t in trusted)]  # fmt: skip
    if not new:
        return first
    kept = [m for m in first.measurements if not _superseded(m, new)]
    labels = cv2.connectedComponents(tiled.mask, connectivity=8)[1]
    cores = np.array([np.add(m.apex, np.multiply(m.axis, 0.25 * m.length_px)) for m in new])
    cores = cores[np.isfinite(cores).all(axis=1)]
    x, y = np.rint(cores).astype(np.int64).T
    inside = (x >= 0) & (x < labels.shape[1]) & (y >= 0) & (y < labels.shape[0])
    picked = set(labels[y[inside], x[inside]].tolist()) - {0}
    mask = first.mask | np.isin(labels, list(picked)).astype(first.mask.dtype)
    return Reading(mask, first.apexes, along_boom(kept + new, trusted + new, hints))


def _superseded(m: ConeMeasurement, new: Sequence[ConeMeasurement]) -> bool:
    """Whether a first reading gives way to the new plumes: a reading without a trusted
    angle at one's nozzle, or the frame's "no plume"."""
    if m.reliable:
        return False
    return is_no_plume(m) or any(_same_nozzle(m, n) for n in new)


def is_no_plume(m: ConeMeasurement) -> bool:
    """Whether `m` is a frame's "no plume" reading (no_spray, without an apex)."""
    return m.has(QualityFlag.NO_SPRAY) and not np.isfinite(m.apex).all()


def saw_nothing(reading: Reading) -> bool:
    """Whether a reading found nothing at all: only the "no plume" reading, and no apex the
    model's head marks."""
    no_peaks = reading.apexes is None or len(reading.apexes) == 0
    return no_peaks and all(is_no_plume(m) for m in reading.measurements)


def _same_nozzle(a: ConeMeasurement, b: ConeMeasurement) -> bool:
    """Whether `a`'s apex lies where `b`'s nozzle is (recovery's nearness)."""
    return bool(np.isfinite(a.apex).all()) and near_apex_of(np.asarray(a.apex), b)


def segment_image(
    segmenter: Segmenter, image: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The mask and, from a predictor whose model has an apex head, the likely apexes (K, 2)
    and the head's heat at each (K,) (None, None from any other segmenter)."""
    if getattr(segmenter, "has_apex_head", False):
        (seg,) = segmenter.segment([image])  # type: ignore[attr-defined]
        return seg.mask, seg.apexes, seg.apex_strength
    return segmenter(image), None, None


def with_apex_prior(
    hints: MeasureHints | None, apexes: np.ndarray | None, strength: np.ndarray | None = None
) -> MeasureHints | None:
    """`hints` plus the likely apexes (K, 2) as `apex_prior`, and the head's heat at each
    (K,) as `apex_prior_strength` where known (unchanged when there are no apexes)."""
    if apexes is None:
        return hints
    prior = [(float(x), float(y)) for x, y in np.asarray(apexes).reshape(-1, 2)]
    sure = None if strength is None else [float(v) for v in np.asarray(strength).ravel()]
    return replace(hints or MeasureHints(), apex_prior=prior, apex_prior_strength=sure)


@dataclass(frozen=True)
class Reading:
    """One image read end to end: its (H, W) uint8 {0, 1} mask (the segmented one with each
    trusted plume redrawn from its reading, spraycv.geometry.plume_shape), the likely apexes
    (K, 2) from a model's apex head (None from other segmenters) and one measurement per
    plume."""

    mask: np.ndarray
    apexes: np.ndarray | None
    measurements: list[ConeMeasurement]


@dataclass(frozen=True)
class Measurer:
    """The one pipeline from an image to measurements: segment, take the likely apexes as a
    prior, measure the cones, re-read each plume near its orifice when a refiner is set,
    assess how far each reading can be trusted (spraycv.geometry.confidence), and read the
    plumes the mask merged away at the apex peaks no reading explains
    (spraycv.refine.recover; with a refiner and no hint apexes); the mask it returns has
    each trusted plume redrawn from its reading (GeometryConfig.mask_shape)."""

    segmenter: Segmenter = segment_classical
    hints: MeasureHints | None = None
    config: GeometryConfig | None = None
    refiner: Refiner | None = None
    # whether a frame in which the first look found nothing is searched further: the tiled
    # look finds far views' sprays the first look misses whole (experiments row 164), the
    # quarter-turned looks sprays seen side-on (row 174); they make a frame without spray
    # cost about eight times its first look, so a camera daemon that knows its source is
    # idle skips them (spraycv.stream.idle)
    search_when_nothing_seen: bool = True

    @property
    def name(self) -> str:
        """The segmenter's name, and the refiner's when there is one."""
        base = getattr(self.segmenter, "name", getattr(self.segmenter, "__name__", "segmenter"))
        return f"{base} + refiner" if self.refiner is not None else base

    def __call__(self, image: np.ndarray) -> Reading:
        """Read one (H, W, 3) uint8 BGR or (H, W) uint8 image."""
        mask, apexes, strength = segment_image(self.segmenter, image)
        return self.read_segmented(image, mask, apexes, strength)

    def read_segmented(
        self,
        image: np.ndarray,
        mask: np.ndarray,
        apexes: np.ndarray | None = None,
        strength: np.ndarray | None = None,
    ) -> Reading:
        """Read an image its segmenter has segmented already (`read_mask`), then complete
        the reading (`completed`): every path from a frame to a reading."""
        return self.completed(image, self.read_mask(mask, apexes, image, strength))

    def completed(self, image: np.ndarray, first: Reading) -> Reading:
        """The first reading of `image` with its tiles where it asks for them
        (`with_tiles`), then turned where its sprays point sideways or up (`with_turn`).
        The tiles are read at most once: a turned reading that asks for them too takes the
        same upright tiles."""
        tiled = functools.cache(functools.partial(self._tiled_reading, image))
        return self.with_turn(image, self.with_tiles(image, first, tiled), tiled)

    def with_turn(
        self, image: np.ndarray, reading: Reading, tiled: Callable[[], Reading] | None = None
    ) -> Reading:
        """`reading`, or where its plumes point sideways or up (spraycv.runtime.turn; its
        trusted plumes, or all where it trusts none), the image read again with the
        network's look turned so that they point down (the geometry and the refiner read
        the frame as it is), unless that trusts fewer plumes, or none. The network reads
        sprays that point down best (experiments row 167). Where nothing at all is read, no
        plume tells the way to turn: `turned_search` looks every way; so it does where only
        untrusted plumes point sideways or up and their turn trusts none either. `tiled`:
        the tiles' reading, as `with_tiles` takes it."""
        turned_look = getattr(self.segmenter, "turned_look", None)
        if turned_look is None:
            return reading
        if saw_nothing(reading):
            return self.turned_search(image, reading) if self.search_when_nothing_seen else reading
        trusted = [m.axis for m in reading.measurements if m.reliable]
        axes = trusted or [m.axis for m in reading.measurements]
        k = turn_down(np.array(axes, np.float64))
        if k == 0:
            return reading
        seg = turned_look(image, k)
        turned = self.read_mask(seg.mask, seg.apexes, image, seg.apex_strength)
        turned = self.with_tiles(image, turned, tiled)
        if sum(m.reliable for m in turned.measurements) >= max(len(trusted), 1):
            return turned
        if trusted or not self.search_when_nothing_seen:
            return reading  # a turn that trusts nothing keeps the first mask (dim frames)
        # an untrusted plume read from its far corner points back at its orifice, so the
        # turn it asks for can be the wrong one: the other turns are looked at too (row 219)
        return self.turned_search(image, reading, skip=k)

    def turned_search(self, image: np.ndarray, reading: Reading, skip: int = 0) -> Reading:
        """The reading of the quarter turn of `image` (any but `skip`, one already looked at)
        that trusts the most plumes, where one trusts any; else `reading` (which saw nothing,
        or trusts nothing). A spray seen side-on can be missed whole by the upright look
        (experiments row 174: five frames of three drawers, read within 0.2-1.8 deg once
        turned). Only a trusted plume replaces the reading: on 263 frames without spray no
        turn trusted one, where untrusted readings would have been false plumes (row 167
        found them on dim frames)."""
        best, most = reading, 0
        for k in (k for k in (1, 2, 3) if k != skip):
            seg = self.segmenter.turned_look(image, k)  # type: ignore[attr-defined]
            turned = self.read_mask(seg.mask, seg.apexes, image, seg.apex_strength)
            trusted = sum(m.reliable for m in turned.measurements)
            if trusted > most:
                best, most = turned, trusted
        return best

    def with_tiles(
        self, image: np.ndarray, reading: Reading, tiled: Callable[[], Reading] | None = None
    ) -> Reading:
        """`reading` of `image` with the trusted plumes that only its tiles read, where it
        leaves small sprays unexplained and the model asks for tiles (`ModelIO.tile_short`;
        spraycv.runtime.zoom.wants_tiles, `with_new_plumes`); else `reading` itself.
        `tiled`: the tiles' reading, given by the caller that may need it twice (None: read
        here, `_tiled_reading`)."""
        if not self._wants_tiles(reading, image.shape[:2]):
            return reading
        tiles = tiled() if tiled is not None else self._tiled_reading(image)
        return with_new_plumes(reading, tiles, self.hints)

    def _tiled_reading(self, image: np.ndarray) -> Reading:
        """The image read in overlapping tiles (`Predictor.tiled_look`)."""
        seg = self.segmenter.tiled_look(image)  # type: ignore[attr-defined]
        return self.read_mask(seg.mask, seg.apexes, image, seg.apex_strength)

    def _wants_tiles(self, reading: Reading, shape: tuple[int, int]) -> bool:
        io = getattr(self.segmenter, "io", None)
        short = getattr(io, "tile_short", None)
        if short is None or (not self.search_when_nothing_seen and saw_nothing(reading)):
            return False
        trusted = [m for m in reading.measurements
                   if not m.unreliable and math.isfinite(m.length_px)]  # fmt: skip
        small_left = wants_tiles(
            shape,
            np.array([m.apex for m in trusted]).reshape(-1, 2),
            np.array([m.length_px for m in trusted]),
            len(reading.measurements) - len(trusted),
            reading.apexes,
            short,
        )
        # not where the square look already read the spray up close (checked last: a scan
        # of the mask, and most frames are settled by the readings alone)
        return small_left and (
            io.zoom_below is None or zoom_box(reading.mask, io.zoom_below) is None
        )

    def read_mask(
        self,
        mask: np.ndarray,
        apexes: np.ndarray | None = None,
        image: np.ndarray | None = None,
        strength: np.ndarray | None = None,
    ) -> Reading:
        """Measure a mask already segmented (the refiner needs the image it came from;
        `strength`: the apex head's heat at each apex, where known)."""
        coarse = self.coarse_readings(mask, apexes, strength)
        return self.finish_reading(mask, apexes, image, coarse)

    def coarse_readings(
        self,
        mask: np.ndarray,
        apexes: np.ndarray | None = None,
        strength: np.ndarray | None = None,
    ) -> list[ConeMeasurement]:
        """The geometry's readings of a mask, before refinement and confidence."""
        hints = with_apex_prior(self.hints, apexes, strength)
        return measure_cones(mask, hints=hints, config=self.config or GeometryConfig())

    def finish_reading(
        self,
        mask: np.ndarray,
        apexes: np.ndarray | None,
        image: np.ndarray | None,
        coarse: list[ConeMeasurement],
    ) -> Reading:
        """The coarse readings refined near the orifice (with a refiner and the image),
        assessed, and completed with the plumes the mask merged away."""
        config = self.config or GeometryConfig()
        measurements, support = coarse, [math.nan] * len(coarse)
        if self.refiner is not None and image is not None:
            measurements, support = self.refiner.refine_with_support(
                image, measurements, self.hints
            )
        measurements = [
            assess(m, mask.shape, config, image, apexes, crop)
            for m, crop in zip(measurements, support, strict=True)
        ]
        hint_apexes = self.hints is not None and self.hints.apex is not None
        if self.refiner is not None and image is not None and not hint_apexes:
            measurements = recover_missed(
                image,
                mask,
                apexes,
                measurements,
                self.refiner,
                lambda m, crop: assess(m, mask.shape, config, image, apexes, crop),
                self.hints,
            )
        return Reading(shaped_mask(mask, measurements, config.mask_shape), apexes, measurements)


def load_measurer(
    weights: Path,
    hints: MeasureHints | None = None,
    config: GeometryConfig | None = None,
    threads: int | None = None,
    refine: bool = True,
    device: str = "cpu",
) -> Measurer:
    """The pipeline of a model file: its predictor, and the refiner stored beside it
    (spraycv.formats.refiner_companion) unless `refine` is off or there is none."""
    from spraycv.formats import refiner_companion
    from spraycv.refine.stage import Refiner
    from spraycv.runtime.predictor import load_predictor

    predictor = load_predictor(weights, device, threads=threads)
    companion = refiner_companion(weights)
    refiner = None
    if refine and companion.is_file():
        refiner = Refiner(load_predictor(companion, device, threads=threads))
    return Measurer(predictor, hints, config, refiner)


def as_measurer(
    segmenter: Segmenter | Measurer,
    hints: MeasureHints | None = None,
    config: GeometryConfig | None = None,
) -> Measurer:
    """The pipeline around a bare segmenter, or a measurer with `hints` and `config` in place
    of its own where they are given."""
    if isinstance(segmenter, Measurer):
        return replace(segmenter, hints=hints or segmenter.hints, config=config or segmenter.config)
    return Measurer(segmenter, hints, config)


def measure_image(
    image: np.ndarray,
    segmenter: Segmenter | Measurer = segment_classical,
    hints: MeasureHints | None = None,
    config: GeometryConfig | None = None,
) -> tuple[np.ndarray, list[ConeMeasurement]]:
    """Segment an image and measure its sprays (through `as_measurer`'s pipeline).

    Args:
        image: (H, W, 3) uint8 BGR or (H, W) uint8 grayscale.
    Returns:
        The (H, W) uint8 {0, 1} mask and one measurement per plume.
    """
    reading = as_measurer(segmenter, hints, config)(image)
    return reading.mask, reading.measurements


def _levels_text(stored: np.ndarray) -> tuple[int, str]:
    levels = grey_levels(stored)
    shown = ", ".join(str(v) for v in levels[:6]) + (", ..." if levels.size > 6 else "")
    return int(levels.size), shown


def choose_reading(
    stored: np.ndarray, kind: InputKind, name: str
) -> tuple[Literal["image", "mask"], str | None]:
    """Read a stored file as a photo or a mask, with a note when the choice is not obvious.

    `auto` reads single-channel files holding only 0/1 or 0/255 as masks, all else as photos.
    """
    if kind == "mask":
        if stored.ndim == 2 and not looks_like_mask(stored):
            _, shown = _levels_text(stored)
            return "mask", f"{name}: not a binary mask (values {shown}): read as spray where > 127"
        return "mask", None
    if kind == "image" or stored.ndim != 2:
        return "image", None
    if looks_like_mask(stored):
        return "mask", None
    count, shown = _levels_text(stored)
    if count > MASK_LIKE_LEVELS:
        return "image", None
    return "image", (
        f"{name}: read as a photo, not a mask: one channel with {count} grey levels ({shown}), "
        "and a mask holds only 0/1 or 0/255 (--kind mask reads it as a mask)"
    )


def measure_file(
    path: Path,
    kind: InputKind = "auto",
    segmenter: Segmenter | Measurer = segment_classical,
    hints: MeasureHints | None = None,
    config: GeometryConfig | None = None,
    max_pixels: int | None = None,
) -> FileResult:
    """Measure one file; errors are returned in the result, never raised, so a batch goes on."""
    result = FileResult(source=path)
    try:
        stored = read_image(path, max_pixels)
    except ImageReadError as exc:  # its message names the file
        result.error = str(exc)
        return result
    result.kind, note = choose_reading(stored, kind, str(path))
    dim = exposure_note(stored, str(path)) if result.kind == "image" else None
    result.notes += [n for n in (note, dim) if n]
    try:
        if result.kind == "mask":
            if stored.ndim != 2:
                raise ImageReadError(f"a mask must have one channel, got shape {stored.shape}")
            result.mask = to_binary_mask(stored)
            reading = as_measurer(segmenter, hints, config).read_mask(result.mask)
            result.measurements = reading.measurements
        else:
            result.image = stored
            result.mask, result.measurements = measure_image(stored, segmenter, hints, config)
    except ValueError as exc:  # MaskError, ImageError and config errors are ValueErrors
        result.error = f"{path}: {exc}"
    return result
