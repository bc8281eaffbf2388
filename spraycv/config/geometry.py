"""Defaults of the cone geometry (see docs/cone_angle.md)."""

from __future__ import annotations

from pydantic import Field, model_validator

from spraycv.config.base import StrictModel


class BandConfig(StrictModel):
    """Near-nozzle band, as distances along the axis from the apex, where boundaries are fitted.

    Fractions of the spray length by default; `start_px`/`end_px` or `start_mm`/`end_mm`
    (with a scale) override them when set.
    """

    start_frac: float = Field(0.10, ge=0.0, lt=1.0)
    end_frac: float = Field(0.40, gt=0.0, le=1.0)
    min_start_px: float = Field(4.0, ge=0.0)
    start_px: float | None = Field(None, ge=0.0)
    end_px: float | None = Field(None, gt=0.0)
    start_mm: float | None = Field(None, ge=0.0)
    end_mm: float | None = Field(None, gt=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> BandConfig:
        if self.end_frac <= self.start_frac:
            raise ValueError(f"band end_frac ({self.end_frac}) must exceed start_frac ({self.start_frac})")
        for unit in ("px", "mm"):
            lo, hi = getattr(self, f"start_{unit}"), getattr(self, f"end_{unit}")
            if (lo is None) != (hi is None):
                raise ValueError(f"set both start_{unit} and end_{unit}, or neither")
            if lo is not None and hi is not None and hi <= lo:
                raise ValueError(f"band end_{unit} ({hi}) must exceed start_{unit} ({lo})")
        return self
