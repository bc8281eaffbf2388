"""Near-orifice refinement: re-read each plume's boundaries on a canonical crop at native
resolution (docs/cone_angle.md, "Refinement").

The main model segments the whole frame at 256 px, where a plume is only a few pixels wide
next to its orifice, the very band the cone angle is defined on. For each measured plume the
refiner cuts the near-orifice region out of the full-resolution image, rotated so the axis
points down and scaled by the spray length; a small network segments that crop, and the
boundary lines are fitted to its edges mapped back to the image.
"""

from spraycv.refine.pose import CropPose, crop_pose, pose_transform, to_image, warp_crop

__all__ = ["CropPose", "crop_pose", "pose_transform", "to_image", "warp_crop"]
