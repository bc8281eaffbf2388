"""Camera effects: defocus and motion blur, vignetting, exposure, sensor noise, tone, JPEG.

Applied in the physical order: optics (blur, vignetting) on the scene radiance, then the
sensor (gain, shot and read noise, clipping), then the camera's processing (tone curve,
8-bit quantisation, grayscale or colour, JPEG compression).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from spraycv.data.synth.params import CameraParams


def motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    """Normalised line kernel of `length` px at `angle_deg`, (k, k) float32."""
    k = math.ceil(length) | 1
    kern = np.zeros((k, k), np.float32)
    c = (k - 1) / 2
    dx, dy = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    p0 = (round((c - dx * length / 2) * 16), round((c - dy * length / 2) * 16))
    p1 = (round((c + dx * length / 2) * 16), round((c + dy * length / 2) * 16))
    cv2.line(kern, p0, p1, 1.0, 1, cv2.LINE_AA, 4)
    return kern / max(float(kern.sum()), 1e-6)


def optics(
    radiance: np.ndarray,
    cam: CameraParams,
    color: bool,
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0),
) -> np.ndarray:
    """Exposure, white balance, blur and vignetting: the light on the sensor.

    Returns:
        (H, W, 3) float32, or (H, W) for a gray camera.
    """
    h, w = radiance.shape[:2]
    # Gain and white balance are linear, like the blurs: apply them first, and for a gray
    # camera collapse to one channel at once (BT.601 weights), so the rest runs on 1/3.
    gain = np.float32(cam.exposure_gain) * np.asarray(white_balance, np.float32)
    if color:
        img = radiance * gain
    else:
        weights = (np.array([0.114, 0.587, 0.299], np.float32) * gain)[None, :]
        img = cv2.transform(np.ascontiguousarray(radiance, np.float32), weights)
    if cam.defocus_sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), cam.defocus_sigma)
    if cam.motion_px > 1:
        img = cv2.filter2D(img, -1, motion_kernel(cam.motion_px, cam.motion_angle_deg))
    if cam.vignetting > 0:
        x = np.arange(w, dtype=np.float32)[None, :] - cam.vignette_center[0] * (w - 1)
        y = np.arange(h, dtype=np.float32)[:, None] - cam.vignette_center[1] * (h - 1)
        vig = 1.0 - (cam.vignetting / (0.25 * (w * w + h * h))) * (x * x + y * y)
        img = img * (vig[..., None] if color else vig)
    return img


def sensor_noise(img: np.ndarray, read: float, shot: float, rng: np.random.Generator) -> np.ndarray:
    """Read noise (sigma `read`) and shot noise (sigma `shot` at full scale), full scale 1."""
    sig = np.sqrt(read**2 + shot**2 * np.maximum(img, 0.0))
    # Triangular noise of unit variance: looks Gaussian, several times cheaper to draw.
    tri = rng.random(img.shape, dtype=np.float32) + rng.random(img.shape, dtype=np.float32)
    return img + sig * (tri - 1.0) * np.float32(math.sqrt(6.0))


def as_three_channels(img: np.ndarray) -> np.ndarray:
    """(H, W) or (H, W, 1) gray -> (H, W, 3) equal channels; colour images unchanged."""
    if img.ndim == 3 and img.shape[2] == 3:
        return np.ascontiguousarray(img)
    h, w = img.shape[:2]
    return np.ascontiguousarray(np.repeat(img.reshape(h, w, 1), 3, axis=2))


def sensor_8bit(
    img: np.ndarray, cam: CameraParams, color: bool, rng: np.random.Generator
) -> np.ndarray:
    """Noise, clipping, tone curve, 8-bit quantisation and JPEG of the light on the sensor.

    Returns:
        (H, W, 3) uint8 BGR; three equal channels when `color` is False.
    """
    img = sensor_noise(img, cam.read_noise, cam.shot_noise, rng)
    img = np.clip(img, 0.0, 1.0) ** np.float32(1.0 / cam.gamma)
    out = np.round(img * 255.0).astype(np.uint8)
    if cam.jpeg_quality > 0:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(cam.jpeg_quality)])
        if ok:  # a gray image is encoded as a one-channel JPEG, as gray cameras do
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR if color else cv2.IMREAD_GRAYSCALE)
    return as_three_channels(out)


def apply_camera(
    radiance: np.ndarray,
    cam: CameraParams,
    color: bool,
    rng: np.random.Generator,
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0),
) -> np.ndarray:
    """Turn scene radiance (H, W, 3) float32 (~[0, 1]) into the camera's image.

    Returns:
        (H, W, 3) uint8 BGR; three equal channels when `color` is False.
    """
    return sensor_8bit(optics(radiance, cam, color, white_balance), cam, color, rng)
