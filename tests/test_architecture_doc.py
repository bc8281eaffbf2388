"""docs/architecture.md stays true to the code (issue 14, "The architecture page").

The page's Mermaid picture names modules, classes, functions and methods as dotted paths
from the package down (`stream.store.StoreWriter` is `spraycv.stream.store.StoreWriter`):
each must import. So that no name escapes the check, every node is declared with a quoted
label, edges only join declared nodes, and a label word that looks like code (snake_case or
CamelCase) must be written as such a path. The files the page names must exist, and its
table must name every package of spraycv.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = "spraycv"

# What the picture must show: the path from a frame to a stored measurement (issue 14).
MUST_SHOW = (
    "stream.reader.SourceReader",
    "stream.worker.InferenceWorker",
    "measure.Measurer.read_mask",
    "geometry.measure_cones",
    "stream.records.NozzleRecord",
    "stream.store.StoreWriter",
)

MERMAID = re.compile(r"^```mermaid\n(.*?)^```", re.MULTILINE | re.DOTALL)
QUOTED = re.compile(r'"[^"]*"')
OPENER = r"[\[\(\{]+"  # a node shape's opening brackets: [ ( { ([ [( [[ ((
SHAPE = re.compile(OPENER + r'""' + r"[\]\)\}]+")
DECLARED = re.compile(r"\b([A-Za-z_]\w*)\s*" + OPENER + r'""')
SUBGRAPH = re.compile(r"^\s*subgraph\s+([A-Za-z_]\w*)", re.MULTILINE)
UNQUOTED = re.compile(r"\b[A-Za-z_]\w*\s*" + OPENER + r'(?=[^\[\(\{"])')
EDGE_LABEL = re.compile(r'\|""\|')
WORD = re.compile(r"\b[A-Za-z_]\w*\b")
DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
CODE_WORD = re.compile(r"\b(?:\w*_\w*|\w*[a-z]\w*[A-Z]\w*)\b")  # snake_case, CamelCase
KEYWORDS = frozenset(
    {
        *("flowchart", "graph", "subgraph", "end", "direction"),
        *("TD", "TB", "BT", "LR", "RL"),
        *("classDef", "class", "style", "linkStyle", "click"),
    }
)
DOC_PATH = re.compile(r"`((?:spraycv|tests|docs|app|configs|scripts|benchmarks)/[^`\s]*)`")


def mermaid_blocks(text: str) -> list[str]:
    """The bodies of the ```mermaid fenced blocks of a Markdown text, comments left out."""
    return [
        "\n".join(line for line in body.splitlines() if not line.strip().startswith("%%"))
        for body in MERMAID.findall(text)
    ]


def labels(block: str) -> list[str]:
    """Every quoted text of a block: node labels, subgraph titles and edge labels."""
    return [q[1:-1] for q in QUOTED.findall(block)]


def names(block: str) -> list[str]:
    """The dotted names the block's labels mention, in order, each once."""
    return list(dict.fromkeys(n for label in labels(block) for n in DOTTED.findall(label)))


def resolve(name: str) -> object:
    """`spraycv.<name>`: the longest module prefix imported, the rest read as attributes
    (AttributeError or ModuleNotFoundError when there is no such thing)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join([PACKAGE, *parts[:cut]])
        try:
            found: object = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            asked = exc.name is not None and (
                module_name == exc.name or module_name.startswith(exc.name + ".")
            )
            if not asked:
                raise  # a module that exists failed on a missing dependency: say so
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(f"no module {PACKAGE}.{parts[0]}")


def unresolved(block: str) -> list[str]:
    """'name: why' for every dotted name of the block that does not resolve in spraycv."""
    out = []
    for name in names(block):
        try:
            resolve(name)
        except (AttributeError, ModuleNotFoundError) as exc:
            out.append(f"{name}: {exc}")
    return out


def unchecked(block: str) -> list[str]:
    """What would let a name slip past `unresolved`: a node label not in quotes, an edge to
    a node never declared with a label (Mermaid would show its bare id), or a code-like
    word in a label that is not written as a dotted name."""
    skeleton = QUOTED.sub('""', block)
    problems = [f"label not in quotes: {m.group(0)}" for m in UNQUOTED.finditer(skeleton)]
    declared = set(DECLARED.findall(skeleton)) | set(SUBGRAPH.findall(skeleton))
    for line in skeleton.splitlines():
        if line.strip().split(" ")[0] in KEYWORDS:
            continue
        bare = SHAPE.sub("", EDGE_LABEL.sub("", line))
        problems += [f"node without a label: {w}" for w in WORD.findall(bare) if w not in declared]
    for label in labels(block):
        for word in CODE_WORD.findall(DOTTED.sub("", label)):
            problems.append(f"{word!r} in {label!r}: write it as a dotted name under spraycv")
    return problems


@pytest.fixture(scope="module")
def blocks() -> list[str]:
    found = mermaid_blocks(DOC.read_text(encoding="utf-8"))
    assert found, f"{DOC.relative_to(ROOT)} has no ```mermaid block"
    return found


def test_every_name_in_the_picture_exists(blocks: list[str]) -> None:
    missing = [problem for block in blocks for problem in unresolved(block)]
    assert not missing, "names in docs/architecture.md's picture not in spraycv:\n" + "\n".join(
        missing
    )


def test_no_name_in_the_picture_escapes_the_check(blocks: list[str]) -> None:
    problems = [problem for block in blocks for problem in unchecked(block)]
    assert not problems, "\n".join(problems)


def test_the_picture_shows_a_frame_going_to_the_store(blocks: list[str]) -> None:
    shown = [n for block in blocks for n in names(block)]
    absent = [
        key for key in MUST_SHOW if not any(n == key or n.startswith(f"{key}.") for n in shown)
    ]
    assert not absent, f"the picture no longer shows {absent}"


def test_the_files_the_page_names_exist() -> None:
    paths = DOC_PATH.findall(DOC.read_text(encoding="utf-8"))
    assert paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def test_the_table_names_every_package() -> None:
    text = DOC.read_text(encoding="utf-8")
    packages = sorted(
        p.name for p in (ROOT / PACKAGE).iterdir() if p.is_dir() and not p.name.startswith("_")
    )
    absent = [name for name in packages if f"`{PACKAGE}/{name}" not in text]
    assert not absent, f"docs/architecture.md's 'Who owns what' lacks {absent}"


def test_the_check_catches_a_drifted_picture() -> None:
    """The checks themselves: a wrong name, a bare node and a bare code word are caught."""
    block = "\n".join(
        [
            "flowchart TD",
            '    a["measure.Measurer.read_mask"] --> b(["stream.store.NoSuchWriter"])',
            '    b -->|"stream.records.Event"| c',
            "    d[StoreWriter]",
            '    e["the StoreWriter and read_mask"]',
        ]
    )
    assert names(block) == [
        "measure.Measurer.read_mask",
        "stream.store.NoSuchWriter",
        "stream.records.Event",
    ]
    assert [p.split(":")[0] for p in unresolved(block)] == ["stream.store.NoSuchWriter"]
    assert unchecked(block) == [
        "label not in quotes: d[",
        "node without a label: c",
        "node without a label: d",
        "node without a label: StoreWriter",
        "'StoreWriter' in 'the StoreWriter and read_mask': write it as a dotted name under spraycv",
        "'read_mask' in 'the StoreWriter and read_mask': write it as a dotted name under spraycv",
    ]
    with pytest.raises(ModuleNotFoundError):
        resolve("no_such_package.thing")
