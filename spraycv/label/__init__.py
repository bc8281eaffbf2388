"""Helpers for labelling a user's own photos: model proposals to correct in LabelMe, and
line truth (spraycv.label.lines: two boundary lines per nozzle) to validate on."""

from __future__ import annotations

from spraycv.label.propose import ProposeReport, propose_labels

__all__ = ["ProposeReport", "propose_labels"]
