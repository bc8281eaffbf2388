"""Line truth: the two boundary lines of each nozzle, marked by a person on their own photos.

The one format (docs/validate_your_nozzles.md), `DIR/lines.json`:

    {"format": "spraycv-lines/1", "units": "px", "note": "...",
     "images": {"IMG_0001.jpg": {"nozzles": [{"lines": [[[x, y], [x, y]],
                                                        [[x, y], [x, y]]],
                                              "note": "..."}]},
                "IMG_0002.jpg": {"nozzles": []},
                "IMG_0003.jpg": {"nozzles": null}}}

- Image keys are paths relative to the folder holding lines.json.
- `nozzles`: null = not labelled yet (eval skips it); [] = labelled, nothing sprays in it
  (every plume measured there is an extra one); else one entry per spraying nozzle.
- A nozzle is its two boundary lines, in either order, each as two points (x, y) in image
  pixels (x right, y down, pixel centres at integers: docs/cone_angle.md). The labelled
  apex is the lines' intersection and the included angle the angle between them, opening
  towards the points; a line given as (apex, point) is fine too.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

LINES_FILE = "lines.json"
FORMAT = "spraycv-lines/1"

Point = tuple[float, float]
Segment = tuple[Point, Point]

MIN_POINT_GAP_PX = 2.0  # two clicks closer than this do not define a line
AT_APEX_PX = 2.0  # a point this close to the intersection is the apex itself
MIN_INCLUDED_DEG = 1.0  # no spray is narrower: such lines are a slip (one boundary twice)

# Where along the spray (a fraction of its length) a person clicks the far point of a
# boundary: where the edge starts to bend, about half way (docs/validate_your_nozzles.md;
# the renderer's boundaries are exactly straight up to at least 0.5 L). The labelled reach
# over it estimates the spray length, which sets the matcher's apex tolerance as it does
# for rendered truth.
FAR_POINT_FRAC = 0.5
# The points of the lines drawn from a rendered truth: as a person clicks them, spanning the
# measurement band (10-40 %) up to FAR_POINT_FRAC.
RENDERED_POINTS_FRAC = (0.1, FAR_POINT_FRAC)
PLACES = 4  # decimals kept in the file: rounding moves an angle by < 1e-3 deg


class LineTruthError(ValueError):
    """A line-truth file that cannot be used; the message is one line naming file and entry."""


@dataclass(frozen=True)
class Cone:
    """A labelled nozzle's cone: apex (x, y), the unit directions of its two boundaries away
    from the apex, the included angle (deg) and reach_px, the distance from the apex to the
    farthest labelled point (a lower bound of the spray length)."""

    apex: Point
    directions: tuple[Point, Point]
    included_deg: float
    reach_px: float


def _sub(a: Point, b: Point) -> Point:
    return (a[0] - b[0], a[1] - b[1])


def _cross(a: Point, b: Point) -> float:
    return a[0] * b[1] - a[1] * b[0]


def _dot(a: Point, b: Point) -> float:
    return a[0] * b[0] + a[1] * b[1]


def _unit(v: Point) -> Point:
    norm = math.hypot(*v)
    return (v[0] / norm, v[1] / norm)


def intersect(first: Segment, second: Segment) -> Point | None:
    """The intersection of the two infinite lines through the segments' points, or None
    when they are parallel (to within MIN_INCLUDED_DEG)."""
    d1, d2 = _unit(_sub(first[1], first[0])), _unit(_sub(second[1], second[0]))
    sin = _cross(d1, d2)
    if abs(sin) < math.sin(math.radians(MIN_INCLUDED_DEG)):
        return None
    t = _cross(_sub(second[0], first[0]), d2) / sin
    return (first[0][0] + t * d1[0], first[0][1] + t * d1[1])


def _direction_from(apex: Point, segment: Segment, name: str) -> Point:
    """The unit direction of a boundary away from the apex, towards its clicked points;
    both points must lie on the same side of the apex (or one at the apex)."""
    offsets = [_dot(_sub(p, apex), _unit(_sub(segment[1], segment[0]))) for p in segment]
    if min(offsets) < -AT_APEX_PX and max(offsets) > AT_APEX_PX:
        raise ValueError(
            f"the apex (where the lines cross) lies between the two points of the {name} line: "
            "click both points of a boundary on the spray side of the nozzle"
        )
    far = segment[int(abs(offsets[1]) > abs(offsets[0]))]
    return _unit(_sub(far, apex))


def cone_of(lines: tuple[Segment, Segment]) -> Cone:
    """The cone two boundary lines define; ValueError saying why when they define none."""
    for segment, name in zip(lines, ("first", "second"), strict=True):
        if math.dist(*segment) < MIN_POINT_GAP_PX:
            raise ValueError(
                f"the two points of the {name} line are less than {MIN_POINT_GAP_PX:g} px apart"
            )
    apex = intersect(*lines)
    if apex is None:
        raise ValueError(
            f"the two lines are parallel (less than {MIN_INCLUDED_DEG:g} deg apart): no apex"
        )
    first, second = (
        _direction_from(apex, s, n) for s, n in zip(lines, ("first", "second"), strict=True)
    )
    included = math.degrees(math.acos(max(-1.0, min(1.0, _dot(first, second)))))
    reach = max(math.dist(apex, p) for segment in lines for p in segment)
    return Cone(apex, (first, second), included, reach)


class NozzleLines(BaseModel):
    """One nozzle: its two boundary lines, each as two (x, y) points in image pixels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lines: tuple[Segment, Segment]
    note: str = ""

    @field_validator("lines")
    @classmethod
    def _finite(cls, lines: tuple[Segment, Segment]) -> tuple[Segment, Segment]:
        if not all(math.isfinite(v) for segment in lines for p in segment for v in p):
            raise ValueError("every coordinate must be a finite number")
        return lines

    @model_validator(mode="after")
    def _is_a_cone(self) -> NozzleLines:
        cone_of(self.lines)  # raises, saying why the lines make no cone
        return self

    @property
    def cone(self) -> Cone:
        return cone_of(self.lines)


class ImageLines(BaseModel):
    """One photo: None = not labelled yet, [] = labelled, nothing sprays in it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nozzles: list[NozzleLines] | None = None
    note: str = ""


class LinesFile(BaseModel):
    """The whole line-truth file of a folder of photos (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["spraycv-lines/1"] = FORMAT
    units: Literal["px"] = "px"  # coordinates are image pixels; a scale is not needed for angles
    note: str = ""
    images: dict[str, ImageLines] = Field(default_factory=dict)

    def labelled(self) -> list[tuple[str, list[NozzleLines]]]:
        """(image key, nozzles) of every labelled image, in file order."""
        return [(k, v.nozzles) for k, v in self.images.items() if v.nozzles is not None]


def entry_name(loc: Sequence[str | int]) -> str:
    """A pydantic error location as the file's entry: images["a.jpg"].nozzles[0].lines."""

    def part(i: int, key: str | int) -> str:
        if i == 1 and loc[0] == "images":  # the image key: a file name, dots and all
            return f'["{key}"]'
        return f"[{key}]" if isinstance(key, int) else f".{key}"

    return "".join(part(i, key) for i, key in enumerate(loc)).lstrip(".") or "(top level)"


def _first_error(path: Path, exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    why = re.sub(r"^(Value|Assertion) error, ", "", first["msg"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{path}: {entry_name(first['loc'])}: {why}{more}"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    duplicated = next((k for k in keys if keys.count(k) > 1), None)
    if duplicated is not None:  # json.loads would keep the last one silently
        raise ValueError(f'"{duplicated}" appears twice')
    return dict(pairs)


def parse_lines(text: str, path: Path) -> LinesFile:
    """Validate a line-truth file's text; LineTruthError: one line naming path and entry."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise LineTruthError(
            f"{path}: not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except ValueError as exc:
        raise LineTruthError(f"{path}: {exc}") from None
    try:
        return LinesFile.model_validate(data)
    except ValidationError as exc:
        raise LineTruthError(_first_error(path, exc)) from None


def load_lines(path: Path) -> LinesFile:
    """Read and validate a line-truth file (LineTruthError when it is missing or invalid)."""
    if not path.is_file():
        raise LineTruthError(f"{path}: no such file")
    return parse_lines(path.read_text(encoding="utf-8"), path)


def _without_empty_notes(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_empty_notes(v) for k, v in value.items() if (k, v) != ("note", "")}
    if isinstance(value, list):
        return [_without_empty_notes(v) for v in value]
    return round(value, PLACES) if isinstance(value, float) else value


def dump_lines(truth: LinesFile) -> str:
    """The file's text: 2-space JSON with each line's two points on one text line."""
    text = json.dumps(_without_empty_notes(truth.model_dump(mode="json")), indent=2)
    number = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    text = re.sub(rf"\[\s*({number}),\s*({number})\s*\]", r"[\1, \2]", text)  # a point
    pair = rf"\[{number}, {number}\]"
    return re.sub(rf"\[\s*({pair}),\s*({pair})\s*\]", r"[\1, \2]", text) + "\n"  # a line


def save_lines(path: Path, truth: LinesFile) -> Path:
    """Write the file (through a temporary file, so an interrupted save leaves the old one)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump_lines(truth), encoding="utf-8")
    os.replace(tmp, path)
    return path


def with_images(truth: LinesFile, keys: Sequence[str]) -> LinesFile:
    """The file with an unlabelled entry (nozzles: null) added for every key it lacks;
    existing entries are kept as they are."""
    images = dict(truth.images) | {k: ImageLines() for k in keys if k not in truth.images}
    return truth.model_copy(update={"images": images})


def truth_nozzles(nozzles: Sequence[NozzleLines]) -> list[dict[str, Any]]:
    """Labelled nozzles as the truth dicts spraycv.geometry.matching reads (apex, length_px,
    visible, the angles). Lines carry no mounting axis, so the half-angles are unknown
    (NaN); length_px, which sets the matcher's apex tolerance, is the spray length the
    labelled reach suggests (FAR_POINT_FRAC)."""
    nan = float("nan")
    return [
        {
            "index": i,
            "apex": list(cone.apex),
            "length_px": cone.reach_px / FAR_POINT_FRAC,
            "visible": True,
            "included_angle_deg": cone.included_deg,
            "half_angle_left_deg": nan,
            "half_angle_right_deg": nan,
        }
        for i, cone in enumerate(n.cone for n in nozzles)
    ]


def turn(direction: Point, degrees: float) -> Point:
    """A direction turned by `degrees` towards its left normal n_left = (-uy, ux)
    (docs/cone_angle.md; negative: towards the right)."""
    ux, uy = direction
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return (c * ux - s * uy, c * uy + s * ux)


def turned_line(segment: Segment, about: Point, degrees: float) -> Segment:
    """A line turned about a point (e.g. its apex) by `degrees` (the sense of `turn`)."""
    moved = (turn(_sub(p, about), degrees) for p in segment)
    return tuple((about[0] + dx, about[1] + dy) for dx, dy in moved)  # type: ignore[return-value]


def boundary_directions(nozzle: Mapping[str, Any]) -> tuple[Point, Point]:
    """The unit directions (left, right) of a renderer nozzle's boundaries, away from its
    apex: its axis turned by the half-angles."""
    axis = _unit((float(nozzle["axis"][0]), float(nozzle["axis"][1])))
    return (
        turn(axis, float(nozzle["half_angle_left_deg"])),
        turn(axis, -float(nozzle["half_angle_right_deg"])),
    )


def lines_of_rendered_nozzle(nozzle: Mapping[str, Any]) -> NozzleLines:
    """A renderer nozzle's truth as two labelled lines, their points at RENDERED_POINTS_FRAC
    of the spray length from the apex along each boundary."""
    ax, ay = (float(v) for v in nozzle["apex"])
    length = float(nozzle["length_px"])
    lines = tuple(
        tuple((ax + f * length * dx, ay + f * length * dy) for f in RENDERED_POINTS_FRAC)
        for dx, dy in boundary_directions(nozzle)
    )
    return NozzleLines(lines=lines)  # type: ignore[arg-type]


def _sprays(nozzle: Mapping[str, Any]) -> bool:
    return bool(nozzle.get("visible", nozzle.get("state", "on") != "off"))


def lines_from_records(records: Sequence[Mapping[str, Any]], image_root: str = "") -> LinesFile:
    """Line truth of rendered frames (labels.jsonl records): every spraying nozzle as two
    lines; a frame where nothing sprays is labelled with no nozzles. image_root is
    prefixed to each record's image path (the records' folder seen from the file's)."""
    images = {
        os.path.join(image_root, r["image"]).replace(os.sep, "/"): ImageLines(
            nozzles=[lines_of_rendered_nozzle(n) for n in r["nozzles"] if _sprays(n)]
        )
        for r in records
    }
    note = (
        "from the renderer's truth: each boundary through the points at "
        f"{' and '.join(f'{f:.0%}' for f in RENDERED_POINTS_FRAC)} of the spray length"
    )
    return LinesFile(note=note, images=images)


def _describe_entry(entry: ImageLines) -> str:
    if entry.nozzles is None:
        return "not labelled yet"
    if not entry.nozzles:
        return "labelled: no spray"
    cones = [n.cone for n in entry.nozzles]
    readings = ", ".join(
        f"{c.included_deg:.1f} deg at ({c.apex[0]:.0f}, {c.apex[1]:.0f})" for c in cones
    )
    return f"{len(cones)} nozzle(s): {readings}"


def describe_lines(truth: LinesFile, keys: Sequence[str]) -> list[str]:
    """One line per entry (its nozzles' included angles and apexes, or its state), entries
    naming no photo among `keys` marked so, and a last line of counts."""
    lines = [
        f"{key}: {_describe_entry(entry)}" + ("" if key in keys else " (no such photo here)")
        for key, entry in truth.images.items()
    ]
    labelled = truth.labelled()
    nozzles = sum(len(n) for _, n in labelled)
    lines.append(
        f"{len(truth.images)} photo(s): {len(labelled)} labelled ({nozzles} nozzle(s)), "
        f"{len(truth.images) - len(labelled)} not labelled yet"
    )
    return lines
