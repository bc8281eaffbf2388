"""The kinds of truth `spraycv eval --data DIR` reads, chosen by the file DIR holds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from spraycv.evaluation.heldout import TruthFrame, rendered_frames
from spraycv.evaluation.line_truth import labelled_frames
from spraycv.label.lines import LINES_FILE


@dataclass(frozen=True)
class TruthKind:
    """file: what a folder of this kind holds; what: its name in messages; frames: the
    folder's frames of truth, which heldout.evaluate_frames and plots.worst_cases take;
    note: what to tell the reader of its report."""

    file: str
    what: str
    frames: Callable[[Path], Sequence[TruthFrame]]
    note: str = ""


# In order of preference: a rendered set holds more (masks too), so it wins when a folder
# holds both, as a rendered set given its line truth by `spraycv label lines-from-render`.
TRUTH_KINDS: dict[str, TruthKind] = {
    "rendered": TruthKind("labels.jsonl", "a rendered dataset", rendered_frames),
    "lines": TruthKind(
        LINES_FILE,
        "line truth from `spraycv label lines`",
        labelled_frames,
        "line truth: angles, missed and extra plumes only; the mask metrics (iou, dice, "
        "boundary_f1) are absent (null), as the truth has no mask",
    ),
}
TRUTH_CHOICES = ("auto", *TRUTH_KINDS)


def truth_kind(folder: Path, choice: str = "auto") -> TruthKind:
    """The kind of truth in `folder`: `choice`, or with "auto" the first kind whose file it
    holds (FileNotFoundError when it holds none); choice is one of TRUTH_CHOICES."""
    kinds = TRUTH_KINDS if choice == "auto" else {choice: TRUTH_KINDS[choice]}
    found = [kind for kind in kinds.values() if (Path(folder) / kind.file).is_file()]
    if not found:
        wanted = " and no ".join(f"{k.file} ({k.what})" for k in kinds.values())
        raise FileNotFoundError(f"{folder}: truth not found: no {wanted}")
    return found[0]
