"""The dashboard's Analyse upload path on files, as the page runs it, in its own process
(so that the fuzz test can measure its peak memory): `python fuzz_analyse.py FILE...`.

Prints, like the CLI, `error: <message>` for an upload the page would show as an error,
`warning: <message>` for a warning, and `measured: <name> <cones>` for each measured upload.
Anything else raised is a bug of the page: it ends this script with a traceback.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from spraycv.dashboard import analyse
from spraycv.dashboard.settings import load_settings
from spraycv.paths import default_weights
from spraycv.runtime.predictor import load_predictor


def main(paths: list[str]) -> None:
    settings = load_settings()
    predictor = load_predictor(default_weights(), threads=1)  # as the dashboard's ui does
    for path in map(Path, paths):
        upload_file = io.BytesIO(path.read_bytes())  # what Streamlit's UploadedFile is
        try:
            upload = analyse.check_upload(
                path.name, upload_file, settings.max_upload_bytes, settings.max_pixels
            )
            analysis = analyse.analyse_upload(upload, predictor, 12, None, settings.max_pixels)
        except analyse.UploadError as exc:
            print(f"error: {exc}")
            continue
        for warning in analysis.warnings:
            print(f"warning: {warning}")
        for result in analysis.results:
            result.overlay_rgb()  # the page shows every overlay
        table = analyse.measurement_table(analysis.results)
        print(f"measured: {path.name} {len(table)}")


if __name__ == "__main__":
    main(sys.argv[1:])
