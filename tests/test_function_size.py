"""No function longer than MAX_LINES in the package, the dashboard's pages, the scripts and the
benchmarks (issue 14, "Size"; the whole of them since 2026-12-05)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 60

PACKAGES = ["spraycv", "app", "scripts", "benchmarks"]


def long_functions(package: Path, max_lines: int) -> list[str]:
    """'file:line name (n lines)' for every function or method (nested ones too) longer
    than max_lines, counted from its `def` to its last line, docstring included."""
    out = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > max_lines:
                    rel = path.relative_to(ROOT)
                    out.append(f"{rel}:{node.lineno} {node.name} ({n} lines)")
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_no_function_over_the_limit(package: str) -> None:
    found = long_functions(ROOT / package, MAX_LINES)
    assert not found, f"functions over {MAX_LINES} lines:\n" + "\n".join(found)
