"""Which sources are idle: their frames show no spray, so their search is skipped there.

A frame in which the first look finds nothing is searched further (spraycv.measure.
Measurer.search_when_nothing_seen): the tiled look finds a far view's small sprays, the
quarter-turned looks a spray seen side-on, but they make a frame without spray cost several
times its first look (experiments rows 164 and 174). A daemon watches the same view frame
after frame: once a source's search found nothing, its frames skip it for `every_s` seconds,
then one frame searches again. A trusted plume ends the idle spell.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class IdleSources:
    """Per source, since when its frames show no spray (times are the frames' own)."""

    every_s: float  # 0: never idle (every frame that finds nothing is searched)
    _since: dict[str, float] = field(default_factory=dict)

    def search_due(self, source: str, time: float) -> bool:
        """Whether a frame of `source` taken at `time` should be searched where its first
        look finds nothing."""
        since = self._since.get(source)
        return since is None or time - since >= self.every_s

    def update(self, source: str, time: float, searched: bool, found: bool) -> None:
        """After a frame: `searched` whether it was allowed the search, `found` whether it
        read a trusted plume. A frame that could look everywhere and found nothing starts
        (or renews) the idle spell; one that found a plume ends it."""
        if found:
            self._since.pop(source, None)
        elif searched and self.every_s > 0:
            self._since[source] = time
