"""Quiet what native decoders print straight to stderr (plain text from C/C++, which the
CLI's one-line errors and the daemon's JSON logs already say in their own words)."""

from __future__ import annotations

import os
import warnings

FFMPEG_QUIET = "-8"  # AV_LOG_QUIET: read by OpenCV when it first opens an FFmpeg capture


def quiet_native_logs() -> None:
    """Silence FFmpeg's and OpenCV's logs and Pillow's header warnings; a user's own
    OPENCV_FFMPEG_LOGLEVEL or OPENCV_LOG_LEVEL wins (to debug a camera, say)."""
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", FFMPEG_QUIET)
    if "OPENCV_LOG_LEVEL" not in os.environ:
        os.environ["OPENCV_LOG_LEVEL"] = "SILENT"  # for a cv2 imported after this
        import cv2  # one imported before reads its level at run time

        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.")
