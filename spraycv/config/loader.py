"""Config files: YAML under configs/ plus `key.sub=value` overrides from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

ModelT = TypeVar("ModelT", bound=BaseModel)


class ConfigError(ValueError):
    """A config file or override that cannot be used; the message says which key and why."""


def parse_overrides(overrides: list[str]) -> dict[str, Any]:
    """['optim.lr=1e-3', 'epochs=5'] -> {'optim': {'lr': 0.001}, 'epochs': 5} (values as YAML)."""
    tree: dict[str, Any] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {item!r} is not of the form key=value")
        node = tree
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r} conflicts with another override")
        node[parts[-1]] = _parse_value(raw)
    return tree


def _parse_value(raw: str) -> Any:
    """A YAML scalar or list; '1e-3' is a float here too (YAML 1.1 would read a string)."""
    if not raw.strip():
        return None
    value = yaml.safe_load(raw)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `update` into a copy of `base` (update wins)."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def load_config(
    schema: type[ModelT], path: str | Path | None = None, overrides: list[str] | None = None
) -> ModelT:
    """Validate a YAML file plus overrides against a schema; unknown keys and bad values fail."""
    data: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file not found: {path}")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping at the top level")
        data = loaded
    data = merge(data, parse_overrides(overrides or []))
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        lines = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        where = f" in {path}" if path else ""
        raise ConfigError(f"invalid config{where}:\n  " + "\n  ".join(lines)) from None


def dump_config(config: BaseModel) -> dict[str, Any]:
    """JSON/YAML-able dict of a config (paths as strings)."""
    return config.model_dump(mode="json")
