"""Helpers for labelling a user's own photos: model proposals to correct in LabelMe."""

from __future__ import annotations

from spraycv.label.propose import ProposeReport, propose_labels

__all__ = ["ProposeReport", "propose_labels"]
