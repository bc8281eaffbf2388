"""Which spec rule applies to a nozzle, for the trend chart's tolerance band.

The daemon's API reports each nozzle's spec *status* but not the rule behind it, so the
dashboard reads the rules from the daemon's config: the embedded one, or a YAML file.
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
