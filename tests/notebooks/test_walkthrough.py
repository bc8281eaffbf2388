"""The walkthrough notebook: saved with its outputs, in step with its generator, and it runs."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType

import pytest
from repo_scripts import load_script

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "01_walkthrough.ipynb"
TIMEOUT_S = 300  # per cell; the whole notebook takes about 50 s on one CPU thread


def load_generator() -> ModuleType:
    return load_script("make_notebook")


def test_saved_notebook_matches_its_generator_and_has_outputs():
    saved = nbformat.read(NOTEBOOK, as_version=4)
    built = load_generator().build()
    assert [(c.cell_type, c.source) for c in saved.cells] == [
        (c.cell_type, c.source) for c in built.cells
    ], "notebook edited by hand: change scripts/make_notebook.py and rerun it with --execute"
    code = [c for c in saved.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "saved without running every cell"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))  # top to bottom
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors
    images = [o for c in code for o in c.outputs if "image/jpeg" in o.get("data", {})]
    assert len(images) >= 4  # samples, loss curve, overlays, angle error


def test_notebook_runs_top_to_bottom(tmp_path: Path):
    """Executes the saved notebook in a temporary folder: nothing lands in the repository."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    tic = time.monotonic()
    load_generator().execute(nb, tmp_path, timeout=TIMEOUT_S)
    print(f"\nwalkthrough ran in {time.monotonic() - tic:.0f} s")
    assert (tmp_path / "walkthrough" / "runs" / "tiny" / "best.safetensors").is_file()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "shipped model" in text and "angle MAE" in text
