"""scripts/setup.sh refuses, in one line, to start a venv on a disk too full to hold it."""

from __future__ import annotations

import os
import subprocess

from repo_scripts import REPO


def test_setup_refuses_a_venv_the_disk_cannot_hold(tmp_path):
    venv = tmp_path / "not" / "yet" / ".venv"
    env = {**os.environ, "SPRAYCV_VENV": str(venv), "SPRAYCV_SETUP_FREE_GB": str(10**9)}
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"setup: error: {tmp_path} has ")
    assert f"the venv {venv} needs about {10**9} GB" in lines[0]
    assert not (tmp_path / "not").exists()
