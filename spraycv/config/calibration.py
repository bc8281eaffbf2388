"""The image scale of a camera, given directly or by the reference it is calibrated from."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from spraycv.config.base import StrictModel

Point = tuple[float, float]


class CheckerboardConfig(StrictModel):
    """A picture of a checkerboard in the sprays' plane, and the board's geometry."""

    image: Path
    inner_corners: tuple[int, int] = Field(description="(cols, rows) inner corners, each >= 3")
    square_mm: float = Field(gt=0, description="side of one square, mm")

    @model_validator(mode="after")
    def _enough_corners(self) -> CheckerboardConfig:
        if min(self.inner_corners) < 3:
            raise ValueError(f"inner_corners must be at least 3x3; got {self.inner_corners}")
        return self


class CalibrationConfig(StrictModel):
    """The px-to-mm scale, by exactly one method.

    - `mm_per_px`: the scale itself;
    - `points` ((x1, y1), (x2, y2)) in pixels and their real `distance_mm`;
    - `checkerboard`: an image of a board with `inner_corners` and `square_mm`.
    """

    mm_per_px: float | None = Field(None, gt=0)
    points: tuple[Point, Point] | None = None
    distance_mm: float | None = Field(None, gt=0)
    checkerboard: CheckerboardConfig | None = None

    @model_validator(mode="after")
    def _one_method(self) -> CalibrationConfig:
        if (self.points is None) != (self.distance_mm is None):
            raise ValueError("set both points and distance_mm, or neither")
        given = [
            name
            for name, value in (
                ("mm_per_px", self.mm_per_px),
                ("points", self.points),
                ("checkerboard", self.checkerboard),
            )
            if value is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "set exactly one of mm_per_px, points + distance_mm or checkerboard; "
                f"got {', '.join(given) or 'none'}"
            )
        return self

    @property
    def method(self) -> str:
        """'mm_per_px', 'points' or 'checkerboard'."""
        if self.mm_per_px is not None:
            return "mm_per_px"
        return "points" if self.points is not None else "checkerboard"

    def resolve_mm_per_px(self, base_dir: str | Path | None = None) -> float:
        """The scale in mm per pixel (reads and searches the checkerboard image if that is
        the method; a relative image path is taken from `base_dir`, e.g. the config's folder).

        Raises ValueError (CalibrationError, ImageReadError) when it cannot be computed.
        """
        # Imported here: the config schema stays free of OpenCV.
        from spraycv.calibration import scale_from_checkerboard, scale_from_points
        from spraycv.io.images import read_image

        if self.mm_per_px is not None:
            return self.mm_per_px
        if self.points is not None and self.distance_mm is not None:
            return scale_from_points(*self.points, self.distance_mm)
        board = self.checkerboard
        assert board is not None  # the validator guarantees one method
        image = board.image
        if base_dir is not None and not image.is_absolute():
            image = Path(base_dir) / image
        return scale_from_checkerboard(read_image(image), board.inner_corners, board.square_mm)
