"""The project's scripts (scripts/*.py) loaded as modules, for tests of their functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def script_path(name: str) -> Path:
    """scripts/NAME.py."""
    return REPO / "scripts" / f"{name}.py"


def load_script(name: str) -> ModuleType:
    """scripts/NAME.py as a module (its `main` is not run)."""
    spec = importlib.util.spec_from_file_location(name, script_path(name))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
