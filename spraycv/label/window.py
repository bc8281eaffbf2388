"""The OpenCV window of `spraycv label lines`: a thin shell that shows
`session.render_view` and feeds mouse clicks and keys to the pure session functions."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import cv2

from spraycv.io.images import read_image
from spraycv.label.lines import LinesFile
from spraycv.label.session import Session, click, press, render_view, to_file

TITLE = "spraycv label lines"
FRAME_MS = 30  # how long to wait for a key between redraws


def window_available(environ: Mapping[str, str] | None = None) -> str | None:
    """None when an OpenCV window can open here, else why not (one line)."""
    environ = os.environ if environ is None else environ
    if sys.platform.startswith("linux") and not (
        environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")
    ):  # checked first: without a display, GTK may end the process instead of raising
        return "no display (DISPLAY is not set)"
    try:
        cv2.namedWindow(TITLE, cv2.WINDOW_NORMAL)
    except cv2.error:
        return "this OpenCV has no window support (opencv-python-headless)"
    return None


def run_window(folder: Path, session: Session, save: Callable[[LinesFile], None]) -> Session:
    """Label in a window until q/Esc or the window is closed; `save` gets the file whenever a
    key saves (and at the end). Returns the last session."""
    clicks: list[tuple[int, int]] = []  # the callback cannot return: it queues clicks here

    def on_mouse(event: int, x: int, y: int, _flags: int, _param: object) -> None:
        if event == cv2.EVENT_LBUTTONDOWN:  # WINDOW_NORMAL reports image pixels
            clicks.append((x, y))

    cv2.namedWindow(TITLE, cv2.WINDOW_NORMAL)
    cv2.setMouseCallback(TITLE, on_mouse)
    shown, image = -1, None
    try:
        while cv2.getWindowProperty(TITLE, cv2.WND_PROP_VISIBLE) >= 1:
            if session.current != shown:
                shown, image = session.current, read_image(folder / session.keys[session.current])
            while clicks:
                session = click(session, clicks.pop(0))
            cv2.imshow(TITLE, render_view(image, session))
            session, key = press(session, cv2.waitKey(FRAME_MS))
            if key is not None and key.saves:
                save(to_file(session))
            if key is not None and key.quits:
                break
    finally:
        save(to_file(session))
        cv2.destroyAllWindows()
    return session
