"""No import cycles among spraycv's modules (issue 14, "No cycles").

A short AST walk, no import of the package: every `import` and `from ... import` statement
counts, at module level or inside a function, under `if TYPE_CHECKING:` or not (a
function-local import only hides a cycle until the function runs). Relative imports are
resolved against the importing module's package, and `from pkg import name` is an edge to
`pkg.name` where that is a module, to `pkg` otherwise. Importing `a.b.c` also runs the
package `a.b`'s `__init__`; like grimp, the walk leaves that implicit edge out, since every
package whose `__init__` re-exports its submodules would otherwise be a cycle with them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "spraycv"

Graph = Mapping[str, frozenset[str]]


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package (packages by __init__)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _base(module: str, is_package: bool, level: int) -> str:
    """The package a relative import of `level` dots starts from."""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    return ".".join(parts[: len(parts) - level + 1])


def _known(name: str, modules: Iterable[str]) -> str | None:
    """`name` if it is one of the modules, else its longest prefix that is, else None."""
    known = set(modules)
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        candidate = ".".join(parts[:k])
        if candidate in known:
            return candidate
    return None


def imports_of(module: str, path: Path, modules: Iterable[str]) -> set[str]:
    """The package modules that `module` (source at `path`) imports, anywhere in its body."""
    modules = set(modules)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = _base(module, is_package, node.level)
                source = f"{base}.{source}" if source else base
            # `from pkg import name`: the submodule pkg.name when there is one, else pkg
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                for alias in node.names
            ]
        else:
            continue
        found.update(t for t in (_known(name, modules) for name in targets) if t)
    found.discard(module)
    return found


def import_graph(root: Path, package: str) -> dict[str, frozenset[str]]:
    """Module -> the package modules it imports."""
    files = module_files(root, package)
    return {m: frozenset(imports_of(m, p, files)) for m, p in files.items()}


def find_cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_walk_resolves_relative_and_submodule_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.b import g\n")
    (pkg / "sub" / "b.py").write_text("from .. import a\nimport pkg.sub.c.x\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"}  # function-local, relative, `from pkg import mod`
    assert graph["pkg.sub"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a", "pkg.sub.c"}  # a name inside a module: the module
    assert find_cycles(graph) == [["pkg.a", "pkg.sub.b"]]


@pytest.mark.parametrize(
    ("graph", "cycles"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
    ],
)
def test_find_cycles(graph: dict[str, set[str]], cycles: list[list[str]]) -> None:
    frozen = {k: frozenset(v) for k, v in graph.items()}
    assert sorted(find_cycles(frozen)) == cycles


def test_spraycv_has_no_import_cycle() -> None:
    graph = import_graph(ROOT, PACKAGE)
    assert len(graph) > 50  # the walk found the package
    cycles = find_cycles(graph)
    described = ["{" + ", ".join(c) + "}" for c in cycles]
    assert not cycles, "import cycles among spraycv modules:\n" + "\n".join(described)
