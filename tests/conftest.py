"""Fixtures shared across the test packages."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from postgres_server import PostgresServer, postgres_bindir

from spraycv.config.train import ModelConfig
from spraycv.models import create_model
from spraycv.runtime.processing import ModelIO
from spraycv.training.checkpoint import save_checkpoint

REPO = Path(__file__).resolve().parents[1]
TINY_IO = ModelIO((64, 64), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


@pytest.fixture(scope="session")
def shipped_pipeline():
    """The shipped model's whole pipeline (with the refiner beside it), one thread: what the
    daemon, the dashboard and `predict` read images with."""
    from spraycv.measure import load_measurer
    from spraycv.paths import default_weights

    return load_measurer(default_weights(), threads=1)


@pytest.fixture(scope="session")
def tiny_checkpoint() -> Callable[..., tuple[Path, torch.nn.Module, dict]]:
    """Factory: save an untrained model as a checkpoint; returns (weights, model, sidecar).

    `prepare(model)` may change the weights first (e.g. a head that says "spray" everywhere).
    """

    def make(
        root: Path,
        arch: str = "FPN",
        encoder: str = "mobilenet_v2",
        io: ModelIO = TINY_IO,
        prepare: Callable[[torch.nn.Module], None] | None = None,
    ) -> tuple[Path, torch.nn.Module, dict]:
        torch.manual_seed(0)
        cfg = ModelConfig(arch=arch, encoder=encoder)
        model = create_model(cfg).eval()
        if prepare is not None:
            prepare(model)
        side = {"model": cfg.model_dump(mode="json"), **io.to_sidecar(), "parameters": 1}
        return save_checkpoint(root / "m.safetensors", model, side), model, side

    return make


@pytest.fixture(scope="session")
def no_spray_frame() -> np.ndarray:
    """A rendered 320 x 320 frame of nozzles that do not spray (the held-out no-spray look,
    seed 0): the shipped pipeline's first look finds nothing in it."""
    import yaml

    from spraycv.config.render import RenderConfig
    from spraycv.data.synth import render_sample

    config = yaml.safe_load((REPO / "configs/render/heldout_nospray.yaml").read_text())
    return render_sample(0, size=320, config=RenderConfig.model_validate(config)).image


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny models run faster on one thread, above all on a machine shared with a training."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses connections for the whole test: bound, never
    listening (a port merely found free could be taken by another process meanwhile)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the session (initdb + pg_ctl in a temporary folder, a
    unix socket there), torn down at the end; skipped only where the binaries are missing."""
    bindir = postgres_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) not found: apt-get install postgresql")
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def pg_url(postgres: PostgresServer) -> str:
    """The superuser's URL of a fresh database of that server (one per test)."""
    return postgres.url(postgres.new_database())
