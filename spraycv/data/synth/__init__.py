"""Synthetic nozzle-spray images with exact ground truth (training data and yardstick).

Public API:
    render_sample(seed, size=512, config=None) -> RenderResult  (image, mask, instances, record)
    write_dataset(out, n, size=512, seed=0, workers=0, image_format="jpg", config=None)
    render_video(out, seed=0, n_frames=36, fps=10, width=640, height=480, config=None,
                 steady=False)  (steady: a steady spray, only droplets, mist and noise flicker)

Ground truth follows docs/cone_angle.md: pixel-centre coordinates, `axis` the unit mounting
axis from the apex into the spray, left = side of n_left = (-uy, ux), half-angles from the
axis, `length_px` = max((p - apex) . axis) over the plume's own envelope pixels, and the
default band [max(0.10 L, 4 px), 0.40 L]. Both boundaries are exact straight lines from the
apex to `params["straight_to_px"]` >= 0.5 L; masks follow them to within half a pixel.

Styles (`RenderConfig.styles.weights`, `spraycv.data.synth.styles`): each frame draws one named
look - hard negatives (lit brackets and bodies, lit clutter, wet surfaces, a black stage),
real-camera conditions (dim, 10-12-bit, averaged, heavy JPEG, motion blur, vignetting, lens
dust) or no spray at all (nozzles off, bare background, brackets only). The record's "style"
names it ("standard" records, the default, carry no "style"); "style_params" holds what the
style drew. Styles change the look and which nozzles spray, never a spraying envelope.
"""

from __future__ import annotations

from spraycv.data.synth.render import RenderResult, render_sample
from spraycv.data.synth.video import render_video, render_video_frames
from spraycv.data.synth.writer import write_dataset

__all__ = ["RenderResult", "render_sample", "render_video", "render_video_frames", "write_dataset"]
