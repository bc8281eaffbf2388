"""The embedded pipeline: a daemon in the dashboard's process on the bundled sample video.

So that the first `streamlit run app/Home.py` shows live measurements with no camera and no
configuration. The dashboard then reads it over HTTP like any other daemon (one code path).
"""

from __future__ import annotations

import atexit
from pathlib import Path

from spraycv.config.daemon import DaemonConfig
from spraycv.paths import SAMPLES_DIR
from spraycv.runtime.predictor import Predictor
from spraycv.stream.daemon import Daemon

SAMPLE_VIDEO = SAMPLES_DIR / "video.mp4"
SOURCE_NAME = "cam0"
# The sample video's nozzles measure about 53-57 deg: a 55 +- 5 deg spec shows mostly green
# with the odd amber frame, which is what a demo should look like.
DEMO_SPEC = {"nominal_deg": 55.0, "tolerance_deg": 5.0}


def embedded_config(
    output_dir: Path, video: Path = SAMPLE_VIDEO, max_fps: float = 5.0
) -> DaemonConfig:
    """A one-camera config: the looped video, a database under output_dir, any free port."""
    return DaemonConfig.model_validate(
        {
            "sources": [{"name": SOURCE_NAME, "url": str(video), "loop": True,
                         "max_fps": max_fps}],
            # one thread: the dashboard shares the machine with the Streamlit server
            "inference": {"threads": 1},
            "spec": DEMO_SPEC,
            "store": {"path": str(Path(output_dir) / "embedded.sqlite")},
            "alarms": {"snapshot_dir": str(Path(output_dir) / "alarms")},
            "api": {"host": "127.0.0.1", "port": 0},
        }
    )  # fmt: skip


def start_embedded_daemon(
    output_dir: Path, predictor: Predictor | None = None, max_fps: float = 5.0
) -> Daemon:
    """Start the daemon (API on a free 127.0.0.1 port: `daemon.api.url`); stopped at exit.

    Raises spraycv.stream.DaemonStartError when the database or the model cannot be used.
    """
    if not SAMPLE_VIDEO.is_file():
        raise FileNotFoundError(f"the bundled sample video is missing: {SAMPLE_VIDEO}")
    daemon = Daemon(embedded_config(output_dir, max_fps=max_fps), predictor).start()
    atexit.register(daemon.stop)  # commit the last rows when Streamlit shuts down
    return daemon
