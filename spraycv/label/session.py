"""The labelling session of `spraycv label lines`, as pure functions: the window
(spraycv.label.window) only shows `render_view` and feeds clicks and keys to `click` and
`press`, so everything it does is tested without a display.

Four clicks per nozzle: two points on one boundary, then two on the other, anywhere along
the straight part near the nozzle. The fourth click closes the nozzle and the next click
starts the next one. Four points on the visible edges are the least ambiguous choice: the
apex is their intersection, as in the measurement (docs/cone_angle.md), so nobody has to
guess where the orifice hides inside the nozzle tip, where a click that is 2 px off at
50 px turns a half-angle by more than 2 deg.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
from pydantic import ValidationError

from spraycv.label.lines import ImageLines, LinesFile, NozzleLines, Point
from spraycv.viz.overlay import draw_label as draw_text

CLICKS_PER_NOZZLE = 4
COLORS = ((0, 255, 0), (255, 0, 255), (0, 200, 255), (255, 255, 0), (0, 128, 255))  # BGR
PENDING = (0, 0, 255)  # red: the clicks of the nozzle being marked


@dataclass(frozen=True)
class Draft:
    """One photo being labelled: its finished nozzles, the clicks of the next nozzle, and
    whether it was marked as holding no spray."""

    nozzles: tuple[NozzleLines, ...] = ()
    pending: tuple[Point, ...] = ()
    no_spray: bool = False
    note: str = ""

    def entry(self) -> ImageLines:
        """The file entry: nozzles, [] when marked "no spray", None when not labelled yet
        (unfinished clicks are not saved)."""
        labelled = bool(self.nozzles) or self.no_spray
        return ImageLines(nozzles=list(self.nozzles) if labelled else None, note=self.note)


@dataclass(frozen=True)
class Session:
    """keys: the photos (paths relative to the folder), drafts: one per photo, current: the
    photo shown, base: the file as loaded (its note and any entries for other photos are
    kept on save), message: what the last action did."""

    keys: tuple[str, ...]
    drafts: tuple[Draft, ...]
    current: int = 0
    base: LinesFile = field(default_factory=LinesFile)
    message: str = ""

    @property
    def draft(self) -> Draft:
        return self.drafts[self.current]

    def with_draft(self, draft: Draft, message: str = "") -> Session:
        drafts = (*self.drafts[: self.current], draft, *self.drafts[self.current + 1 :])
        return replace(self, drafts=drafts, message=message)


def _draft_of(entry: ImageLines | None) -> Draft:
    if entry is None or entry.nozzles is None:
        return Draft(note=entry.note if entry else "")
    return Draft(tuple(entry.nozzles), no_spray=not entry.nozzles, note=entry.note)


def start_session(truth: LinesFile, keys: Sequence[str]) -> Session:
    """A session over the photos `keys`, with the labels `truth` already holds, showing the
    first photo not labelled yet (the first one when all are)."""
    drafts = tuple(_draft_of(truth.images.get(k)) for k in keys)
    unlabelled = [i for i, d in enumerate(drafts) if d.entry().nozzles is None]
    return Session(tuple(keys), drafts, unlabelled[0] if unlabelled else 0, truth)


def to_file(session: Session) -> LinesFile:
    """The line-truth file the session holds now."""
    images = dict(session.base.images)
    images.update({k: d.entry() for k, d in zip(session.keys, session.drafts, strict=True)})
    return session.base.model_copy(update={"images": images})


def _why(exc: ValidationError) -> str:
    return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")


def click(session: Session, point: Point) -> Session:
    """A click at image pixel `point`: the next point of the nozzle being marked."""
    draft = session.draft
    pending = (*draft.pending, (float(point[0]), float(point[1])))
    if len(pending) < CLICKS_PER_NOZZLE:
        return session.with_draft(replace(draft, pending=pending, no_spray=False))
    try:
        nozzle = NozzleLines(lines=(pending[:2], pending[2:]))
    except ValidationError as exc:  # keep the first three: the fourth click was the slip
        return session.with_draft(draft, f"no cone: {_why(exc)}; click the 4th point again")
    done = Draft((*draft.nozzles, nozzle), (), False, draft.note)
    return session.with_draft(
        done, f"nozzle {len(done.nozzles)}: {nozzle.cone.included_deg:.1f} deg"
    )


def undo(session: Session) -> Session:
    """Take back the last click (reopening the last nozzle), or the "no spray" mark."""
    draft = session.draft
    if draft.pending:
        return session.with_draft(replace(draft, pending=draft.pending[:-1]), "undone")
    if draft.nozzles:
        last = draft.nozzles[-1].lines
        reopened = replace(draft, nozzles=draft.nozzles[:-1], pending=(*last[0], last[1][0]))
        return session.with_draft(reopened, "undone: the nozzle is open again")
    return session.with_draft(replace(draft, no_spray=False), "nothing left to undo")


def drop_unfinished(session: Session) -> Session:
    """Forget the clicks of the nozzle being marked."""
    return session.with_draft(replace(session.draft, pending=()), "unfinished nozzle dropped")


def mark_no_spray(session: Session) -> Session:
    """Label the photo as holding no spray (any plume measured there is an extra one)."""
    if session.draft.nozzles or session.draft.pending:
        return session.with_draft(session.draft, "this photo has clicks: undo them first")
    return session.with_draft(replace(session.draft, no_spray=True), "marked: no spray here")


def _go(step: int) -> Callable[[Session], Session]:
    def go(session: Session) -> Session:
        current = min(max(session.current + step, 0), len(session.keys) - 1)
        message = "unfinished nozzle not saved" if session.draft.pending else ""
        return replace(session, current=current, message=message)

    return go


def _keep(session: Session) -> Session:
    return session


@dataclass(frozen=True)
class Key:
    """What a key does: the session change, then whether the file is saved and the window
    closed; help: its line in the help bar."""

    action: Callable[[Session], Session]
    saves: bool
    quits: bool
    help: str


NEXT, PREVIOUS = _go(1), _go(-1)
KEYS: dict[str, Key] = {  # moving between photos saves, so no work is lost
    "n": Key(NEXT, True, False, "n/space next photo"),
    " ": Key(NEXT, True, False, ""),
    "p": Key(PREVIOUS, True, False, "p previous"),
    "u": Key(undo, False, False, "u/backspace undo"),
    "\b": Key(undo, False, False, ""),
    "x": Key(drop_unfinished, False, False, "x drop unfinished nozzle"),
    "e": Key(mark_no_spray, False, False, "e no spray here"),
    "s": Key(_keep, True, False, "s save"),
    "q": Key(_keep, True, True, "q/esc save and quit"),
    "\x1b": Key(_keep, True, True, ""),
}
HELP = " | ".join(k.help for k in KEYS.values() if k.help)


def press(session: Session, code: int) -> tuple[Session, Key | None]:
    """A key code (cv2.waitKey's) applied to the session; the key, or None when unbound."""
    key = KEYS.get(chr(code & 0xFF)) if code >= 0 else None
    return (key.action(session), key) if key else (session, None)


def status_line(session: Session) -> str:
    """What the top bar says: photo, count, nozzles, and the last action's message."""
    draft = session.draft
    state = (
        f"{len(draft.nozzles)} nozzle(s)"
        + (f", point {len(draft.pending)}/4 of the next" if draft.pending else "")
        + (", no spray" if draft.no_spray else "")
        + ("" if draft.entry().nozzles is not None or draft.pending else ", not labelled")
    )
    where = f"{session.current + 1}/{len(session.keys)} {session.keys[session.current]}"
    return " | ".join(filter(None, (where, state, session.message)))


def _thickness(canvas: np.ndarray) -> int:
    return max(1, round(max(canvas.shape[:2]) / 500))


def _xy(p: Point) -> tuple[int, int]:
    return round(p[0]), round(p[1])


def draw_nozzle(canvas: np.ndarray, nozzle: NozzleLines, color: tuple[int, int, int], name: str):
    """Draw a labelled nozzle in place on a (H, W, 3) uint8 BGR canvas: both boundaries
    from the apex out to the farthest clicked point, the points, the apex and the angle."""
    cone, thick = nozzle.cone, _thickness(canvas)
    for dx, dy in cone.directions:
        far = (cone.apex[0] + dx * cone.reach_px, cone.apex[1] + dy * cone.reach_px)
        cv2.line(canvas, _xy(cone.apex), _xy(far), color, thick, cv2.LINE_AA)
    for p in (p for segment in nozzle.lines for p in segment):
        cv2.circle(canvas, _xy(p), 2 * thick + 1, color, thick, cv2.LINE_AA)
    cv2.drawMarker(canvas, _xy(cone.apex), color, cv2.MARKER_CROSS, 6 * thick + 4, thick)
    draw_text(canvas, f"{name}: {cone.included_deg:.1f} deg", _xy(cone.apex), 0.4 * thick)


def render_view(image: np.ndarray, session: Session) -> np.ndarray:
    """(H, W[, 3]) uint8 photo -> (H, W, 3) uint8 BGR picture of the current draft: its
    nozzles, the pending clicks, a status bar on top and the keys at the bottom."""
    canvas = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR) if image.ndim == 2 else image.copy()
    draft, thick = session.draft, _thickness(canvas)
    for i, nozzle in enumerate(draft.nozzles):
        draw_nozzle(canvas, nozzle, COLORS[i % len(COLORS)], str(i + 1))
    for i, p in enumerate(draft.pending):
        cv2.circle(canvas, _xy(p), 2 * thick + 1, PENDING, -1, cv2.LINE_AA)
        if i % 2:  # the second point of a line: draw the line through both
            cv2.line(canvas, _xy(draft.pending[i - 1]), _xy(p), PENDING, thick, cv2.LINE_AA)
    draw_text(canvas, status_line(session), (2, 0), 0.4 * thick)
    draw_text(canvas, HELP, (2, canvas.shape[0]), 0.35 * thick)
    return canvas
