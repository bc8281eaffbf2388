"""Analytic plumes the refinement tests read: narrow, wide, tilted and asymmetric."""

from __future__ import annotations

from spraycv.geometry.analytic import WedgeSpec

SPECS = [
    WedgeSpec((256.0, 60.0), 0.0, 12.0, 12.0, 300.0),
    WedgeSpec((200.0, 80.0), 8.0, 50.0, 50.0, 260.0, flatness=0.6),
    WedgeSpec((300.0, 90.0), -25.0, 20.0, 30.0, 220.0),
    WedgeSpec((250.0, 40.0), 0.0, 35.0, 20.0, 400.0),
]
