"""spraycv: measure agricultural nozzle spray cone angles from camera images."""

from __future__ import annotations

__version__ = "0.1.0"
