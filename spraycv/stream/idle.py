"""Which sources are idle: their frames show no spray, so the tiled look is skipped there.

A frame in which the first look finds nothing takes the tiled look (spraycv.measure.
Measurer.tiles_when_nothing_seen), which finds a far view's small sprays but makes a frame
without spray cost five times its first look (151 against 30 ms on one thread; experiments
row 164). A daemon watches the same view frame after frame: once a source's tiled look
found nothing, its frames skip it for `every_s` seconds, then one frame takes it again. A
trusted plume ends the idle spell.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class IdleSources:
    """Per source, since when its frames show no spray (times are the frames' own)."""

    every_s: float  # 0: never idle (every frame that finds nothing takes the tiled look)
    _since: dict[str, float] = field(default_factory=dict)

    def tiles_due(self, source: str, time: float) -> bool:
        """Whether a frame of `source` taken at `time` should take the tiled look where
        its first look finds nothing."""
        since = self._since.get(source)
        return since is None or time - since >= self.every_s

    def update(self, source: str, time: float, tiled: bool, found: bool) -> None:
        """After a frame: `tiled` whether it was allowed the tiled look, `found` whether it
        read a trusted plume. A frame that could look everywhere and found nothing starts
        (or renews) the idle spell; one that found a plume ends it."""
        if found:
            self._since.pop(source, None)
        elif tiled and self.every_s > 0:
            self._since[source] = time
