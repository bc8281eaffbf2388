"""Base class of every config section: strict, so typos fail loudly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _one_or_more(value: object) -> object:
    return [value] if isinstance(value, str | Path) else value


DataFolders = Annotated[list[Path], BeforeValidator(_one_or_more), Field(min_length=1)]
"""One data folder or several, read as one set (a single path is a list of one)."""


class StrictModel(BaseModel):
    """A config section that rejects unknown keys and validates on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)
