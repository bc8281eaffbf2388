"""Screenshot of the dashboard's Live page in embedded mode -> docs/images/dashboard_live.png.

    .venv/bin/python scripts/dashboard_screenshot.py [--out PATH] [--settle 20]

Starts `streamlit run app/Home.py` with no daemon URL (so it runs the embedded daemon on the
sample video), opens it in Debian's headless Chromium through Playwright, waits for the
frame, the nozzle cards and some trend, and saves a full-page PNG about 1400 px wide.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from spraycv.dashboard.launch import CHROMIUM, CHROMIUM_ARGS, start_dashboard, stop, wait_until_up
from spraycv.paths import REPO_ROOT

WIDTH = 1400


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs/images/dashboard_live.png")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds of trend to gather")
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("playwright is not installed: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    if not CHROMIUM.is_file():
        print(f"{CHROMIUM} not found: apt-get install chromium", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="spraycv-screenshot-"))
    # embedded mode whatever the caller's environment, on a fresh database: the trend then
    # shows this run only, not the pauses between earlier runs
    env = {"SPRAYCV_DAEMON_URL": "", "SPRAYCV_DASHBOARD_DIR": str(work)}
    log = work / "streamlit.log"
    process = start_dashboard(log, env={**os.environ, **env})  # port 0: any free one
    try:
        url = wait_until_up(process, log)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
            page.goto(f"{url}/", wait_until="domcontentloaded")
            # the model loads and the embedded daemon starts on the first visit
            page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
            page.wait_for_selector('[data-testid="stImage"] img', timeout=30_000)
            time.sleep(args.settle)  # let the trend chart fill
            page.wait_for_selector('[data-testid="stVegaLiteChart"]', timeout=30_000)
            # Streamlit scrolls inside its main block, not the page: size the viewport to it
            height = page.evaluate(
                "() => document.querySelector('[data-testid=\"stMainBlockContainer\"]')"
                ".getBoundingClientRect().bottom"
            )
            page.set_viewport_size({"width": WIDTH, "height": min(int(height) + 20, 4000)})
            time.sleep(2.0)  # one refresh at the new size
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=True)
            browser.close()
    except Exception:
        print(log.read_text()[-3000:], file=sys.stderr)
        raise
    finally:
        stop(process)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
