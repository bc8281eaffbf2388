"""Which spec rule applies to a nozzle, for the trend chart's tolerance band.

The daemon's GET /sources lists each source's rules; a YAML config given to the dashboard
(or the embedded daemon's config) takes precedence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from spraycv.config.daemon import DaemonConfig, SourceConfig, SpecRule
from spraycv.config.loader import load_config


@dataclass(frozen=True)
class SpecTable:
    """The rules of one daemon config (empty: no spec known, no band drawn)."""

    default: SpecRule | None = None
    sources: dict[str, SourceConfig] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: DaemonConfig) -> SpecTable:
        return cls(config.spec, {s.name: s for s in config.sources})

    @classmethod
    def from_yaml(cls, path: Path) -> SpecTable:
        """Raises spraycv.config.loader.ConfigError (a ValueError) with the reason."""
        return cls.from_config(load_config(DaemonConfig, path))

    @classmethod
    def from_sources(cls, sources: list[dict]) -> SpecTable:
        """From the daemon's GET /sources, which lists each source's rules."""
        configs = {
            s["name"]: SourceConfig(
                name=s["name"], url=s.get("url") or "-", spec=s.get("spec"),
                nozzle_specs={int(k): v for k, v in (s.get("nozzle_specs") or {}).items()},
            )
            for s in sources
        }  # fmt: skip
        return cls(None, configs)

    def rule(self, source: str, nozzle_id: int | None) -> SpecRule | None:
        """The same lookup as the daemon's worker: per nozzle, per source, then the default."""
        config = self.sources.get(source)
        if config is None:
            return self.default
        if nozzle_id is None:
            return config.spec or self.default
        return config.rule_for(nozzle_id, self.default)

    def source_rules(self, source: str) -> set[tuple[float, float]]:
        """(nominal, tolerance) of every rule used on a source (one band per distinct rule)."""
        config = self.sources.get(source)
        rules = [config.spec or self.default] if config else [self.default]
        if config:
            rules += list(config.nozzle_specs.values())
        return {(r.nominal_deg, r.tolerance_deg) for r in rules if r is not None}
