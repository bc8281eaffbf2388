"""The fleet dashboard in a real browser: a dashboard process on a real PostgreSQL holding
three machines' rows, History opened in headless Chromium, its machine picker offering all
three. Skipped only where Debian's chromium, playwright or the PostgreSQL binaries are missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard_support import FLEET_MACHINES, dashboard_page

from spraycv.dashboard.launch import CHROMIUM

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)
if not CHROMIUM.is_file():
    pytest.skip(f"{CHROMIUM} missing (apt-get install chromium)", allow_module_level=True)


def picker_options(page, label: str) -> list[str]:
    """Open the selectbox with this label and read the options it offers."""
    page.get_by_label(label, exact=False).first.click()
    page.wait_for_selector('[role="option"]', timeout=30_000)
    options = [o.inner_text().strip() for o in page.query_selector_all('[role="option"]')]
    page.keyboard.press("Escape")
    return options


def test_history_in_a_browser_offers_every_machine_of_the_fleet(
    fleet_db: str, tmp_path: Path
) -> None:
    env = {"SPRAYCV_DB": fleet_db, "SPRAYCV_DASHBOARD_DIR": str(tmp_path / "dashboard")}
    with dashboard_page(env, tmp_path, "/History") as page:
        page.wait_for_selector('[data-testid="stSelectbox"]', timeout=60_000)
        page.wait_for_selector('[data-testid="stDataFrame"]', timeout=60_000)
        machines = picker_options(page, "Machine")
        shot = tmp_path / "fleet_history.png"
        page.screenshot(path=str(shot), full_page=True)
    assert set(FLEET_MACHINES) <= set(machines), machines
    assert shot.stat().st_size > 10_000
