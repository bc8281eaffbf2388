"""Base class of every config section: strict, so typos fail loudly."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A config section that rejects unknown keys and validates on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)
