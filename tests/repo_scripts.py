"""The project's scripts (scripts/*.py, benchmarks/*.py) loaded as modules, for tests of their
functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def script_path(name: str, folder: str = "scripts") -> Path:
    """FOLDER/NAME.py."""
    return REPO / folder / f"{name}.py"


def load_script(name: str, folder: str = "scripts") -> ModuleType:
    """FOLDER/NAME.py as a module (its `main` is not run)."""
    spec = importlib.util.spec_from_file_location(name, script_path(name, folder))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module
