"""Scale from a printed checkerboard of known square size held in the camera's view."""

from __future__ import annotations

import cv2
import numpy as np

from spraycv.calibration.scale import CalibrationError, check_length_mm

# cornerSubPix stops after this many iterations or once a corner moves less than this (px)
_SUBPIX_CRITERIA = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 1e-3)
_SUBPIX_BLUR_SIGMA = 1.0  # px


def _gray(image: np.ndarray) -> np.ndarray:
    image = np.asarray(image)
    if image.dtype != np.uint8:
        raise CalibrationError(f"the image must be 8-bit (uint8); got {image.dtype}")
    if image.ndim == 3 and image.shape[2] == 3:
        return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if image.ndim == 2:
        return image
    raise CalibrationError(f"the image must be (H, W) or (H, W, 3); got shape {image.shape}")


def _pattern(inner_corners: tuple[int, int]) -> tuple[int, int]:
    try:
        cols, rows = (int(v) for v in inner_corners)
    except (TypeError, ValueError):
        raise CalibrationError(
            f"inner_corners must be (cols, rows); got {inner_corners!r}"
        ) from None
    if cols < 3 or rows < 3:  # OpenCV's detector needs at least 3 x 3 inner corners
        raise CalibrationError(
            f"inner_corners must be at least 3x3 (cols x rows); got {cols}x{rows}"
        )
    return cols, rows


def find_checkerboard(image: np.ndarray, inner_corners: tuple[int, int]) -> np.ndarray:
    """Sub-pixel inner corners of a checkerboard.

    Parameters
    ----------
    image : np.ndarray
        (H, W) uint8 grey or (H, W, 3) uint8 BGR.
    inner_corners : (int, int)
        (cols, rows): inner corners along a row and along a column (a board of 10 x 7
        squares has 9 x 6), each at least 3.

    Returns
    -------
    np.ndarray
        (rows, cols, 2) float64 corner (x, y) positions, row by row, in pixels.

    Raises
    ------
    CalibrationError
        when the board is not found (naming the pattern looked for) or an input is invalid.
    """
    cols, rows = _pattern(inner_corners)
    gray = _gray(image)
    flags = cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE
    found, corners = cv2.findChessboardCorners(gray, (cols, rows), flags=flags)
    if not found:
        raise CalibrationError(
            f"no checkerboard with {cols}x{rows} inner corners (cols x rows) found in the "
            f"{gray.shape[1]}x{gray.shape[0]} image; count the inner corners (where four "
            "squares meet), not the squares, and keep the whole board with a white margin "
            "in view"
        )
    # The search window must stay inside one square, or a neighbouring corner pulls on it.
    coarse = corners.reshape(rows, cols, 2)
    spacing = min(
        float(np.median(np.hypot(*np.diff(coarse, axis=1).reshape(-1, 2).T))),
        float(np.median(np.hypot(*np.diff(coarse, axis=0).reshape(-1, 2).T))),
    )
    half = int(np.clip(round(0.4 * spacing), 2, 11))
    # On sharp (one-pixel) edges cornerSubPix is pulled towards pixel boundaries by up to
    # ~0.08 px; a slight blur spreads the gradient and halves that. A symmetric blur does
    # not move a corner, and a photo's own blur already makes it a no-op.
    smooth = cv2.GaussianBlur(gray, (0, 0), _SUBPIX_BLUR_SIGMA)
    refined = cv2.cornerSubPix(smooth, corners, (half, half), (-1, -1), _SUBPIX_CRITERIA)
    return refined.reshape(rows, cols, 2).astype(np.float64)


def corner_spacing_px(corners: np.ndarray) -> float:
    """Mean distance of adjacent corners along rows and columns, px.

    Parameters
    ----------
    corners : np.ndarray
        (rows, cols, 2) corner positions, as from `find_checkerboard`.
    """
    along_rows = np.hypot(*np.diff(corners, axis=1).reshape(-1, 2).T)
    along_cols = np.hypot(*np.diff(corners, axis=0).reshape(-1, 2).T)
    return float(np.concatenate([along_rows, along_cols]).mean())


def scale_from_checkerboard(
    image: np.ndarray, inner_corners: tuple[int, int], square_mm: float
) -> float:
    """Image scale from a checkerboard of known square size.

    The board should lie in the plane of the sprays (the scale holds in that plane only)
    and face the camera: the mean spacing averages out a slight tilt, it does not undo
    perspective.

    Parameters
    ----------
    image : np.ndarray
        (H, W) uint8 grey or (H, W, 3) uint8 BGR.
    inner_corners : (int, int)
        (cols, rows) inner corners, each at least 3.
    square_mm : float
        The side of one square, mm (> 0).

    Returns
    -------
    float
        The scale in mm per pixel: ``square_mm`` over the mean spacing of adjacent corners
        along the rows and columns.

    Raises
    ------
    CalibrationError
        (a ValueError) when the board is not found or an input is invalid.
    """
    square_mm = check_length_mm(square_mm, "square_mm")
    return square_mm / corner_spacing_px(find_checkerboard(image, inner_corners))
