"""Readers of annotated data sets: mask folders, COCO and LabelMe JSON (see `registry`)."""

from __future__ import annotations

from spraycv.data.formats.registry import FORMATS, detect_format, load_samples

__all__ = ["FORMATS", "detect_format", "load_samples"]
