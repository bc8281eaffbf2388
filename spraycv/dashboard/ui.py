"""Streamlit glue shared by the pages: style, cached resources, the daemon connection, cards.

The only module of spraycv.dashboard that draws; the numbers come from the plain modules.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from spraycv.config.loader import ConfigError
from spraycv.dashboard.client import DaemonApiError, DaemonClient, DaemonUnreachable
from spraycv.dashboard.embedded import embedded_config, start_embedded_daemon
from spraycv.dashboard.live import STATUS_STYLES, NozzleCard
from spraycv.dashboard.settings import Settings, load_settings
from spraycv.dashboard.specs import SpecTable
from spraycv.measure import Measurer, load_measurer
from spraycv.paths import default_weights
from spraycv.redact import redact_credentials
from spraycv.runtime.predictor import Predictor
from spraycv.stream.daemon import Daemon, DaemonStartError
from spraycv.stream.records import SpecStatus
from spraycv.stream.store import StoreReader


def _card_css() -> str:
    """A tinted card with a thick coloured edge per status (cards are keyed by their tint:
    the status, or the unreliable status for an unreliable reading, its numbers greyed)."""
    grey = STATUS_STYLES[SpecStatus.UNRELIABLE].colour
    return "\n".join(
        [
            *(
                f'div[class*="st-key-nozzle-{status}-"] {{ border-left: 12px solid {style.colour};'
                f" background: {style.colour}1a; }}"
                for status, style in STATUS_STYLES.items()
            ),
            f'div[class*="st-key-nozzle-{SpecStatus.UNRELIABLE}-"] [data-testid="stMetricValue"]'
            f" {{ color: {grey}; }}",
        ]
    )


CSS = f"""
<style>
  .block-container {{ padding-top: 3.8rem; padding-bottom: 1rem; }}
  [data-testid="stAppDeployButton"] {{ display: none; }}
  div[class*="st-key-nozzle-"] {{ border-radius: 0.6rem; padding: 0.5rem 1rem 0.7rem; }}
  div[class*="st-key-nozzle-"] [data-testid="stMetricLabel"] p {{
      font-size: 1.25rem; font-weight: 600; }}
  div[class*="st-key-nozzle-"] [data-testid="stMetricValue"] {{
      font-size: 3.6rem; line-height: 1.0; font-weight: 700; }}
  div[class*="st-key-nozzle-"] [data-testid="stMetricDelta"] {{ font-size: 1.1rem; }}
  {_card_css()}
  .sc-pill {{ display: inline-block; font-weight: 700; font-size: 1.05rem;
      letter-spacing: 0.04em; padding: 0.12rem 0.75rem; border-radius: 1rem; }}
  .sc-spec {{ color: #5f6368; font-size: 1rem; margin-left: 0.6rem; }}
  [data-testid="stImage"] + div [data-testid="stCaptionContainer"],
  [data-testid="stCaptionContainer"] {{ font-size: 1rem; }}
</style>
"""


def style_page() -> None:
    st.html(CSS)


@st.cache_resource(show_spinner="Loading the model…")
def get_measurer() -> Measurer:
    """The shipped model's pipeline (with its refiner), once per process, one thread (the
    machine is shared)."""
    return load_measurer(default_weights(), threads=1)


def get_predictor() -> Predictor:
    """The shipped model's network alone (the embedded daemon adds its own refiner)."""
    return get_measurer().segmenter  # type: ignore[return-value]


def _stop_daemon(daemon: Daemon) -> None:
    daemon.stop()


@st.cache_resource(show_spinner="Starting the embedded daemon on the sample video…",
                   on_release=_stop_daemon)  # fmt: skip
def get_embedded_daemon(output_dir: str) -> Daemon:
    """One embedded daemon per process, started on first use, shared by every session."""
    return start_embedded_daemon(Path(output_dir), get_predictor())


def _close_store(store: StoreReader) -> None:
    store.close()


@st.cache_resource(on_release=_close_store)
def get_store(location: str) -> StoreReader:
    """One reader (one bounded pool) per database and process, shared by every session."""
    return StoreReader(location, query_timeout_s=30.0)


@dataclass(frozen=True)
class Connection:
    """The daemon a page reads from (client None: see `error`)."""

    client: DaemonClient | None
    label: str  # shown to the operator: where the numbers come from
    embedded: bool
    specs: SpecTable
    error: str | None = None
    db_path: Path | None = None  # the SQLite file, when known (the embedded daemon's)
    warning: str | None = None  # usable, but something is missing (e.g. the spec bands)

    def show_warning(self) -> None:
        """In the page, not the sidebar: the sidebar starts folded."""
        if self.warning:
            st.warning(self.warning)


def connect(settings: Settings | None = None) -> Connection:
    """Sidebar fields for the daemon (defaults from the environment) -> a Connection."""
    settings = settings or load_settings()
    env_url = settings.daemon_url or ""
    with st.sidebar:
        st.subheader("Daemon")
        # Widget values go to the browser: the field shows the environment's URL without
        # its password, and left as shown it stands for the real one.
        typed = st.text_input(
            "Daemon URL",
            value=redact_credentials(env_url),
            placeholder="empty: embedded demo on the sample video",
            key="daemon_url",
            help="A running `spraycv daemon`'s API, e.g. http://127.0.0.1:8765 "
            "(env SPRAYCV_DAEMON_URL).",
        ).strip()
        url = env_url if typed == redact_credentials(env_url) else typed
        # The environment's token is never put in the field: widget values go to the browser.
        token = st.text_input(
            "Token", type="password", key="daemon_token",
            placeholder="from SPRAYCV_DAEMON_TOKEN" if settings.token else "none",
            help="The daemon's api.token, if it has one; empty: env SPRAYCV_DAEMON_TOKEN.",
        ) or settings.token  # fmt: skip
        config_path = st.text_input(
            "Daemon config (YAML)",
            value=str(settings.daemon_config or ""),
            key="daemon_config",
            help="The daemon's config file, for the spec bands of the trend chart "
            "(env SPRAYCV_DAEMON_CONFIG).",
        ).strip()
    if not url:
        return _embedded(settings)
    specs, warning = SpecTable(), None
    if config_path:
        try:
            specs = SpecTable.from_yaml(Path(config_path))
        except ConfigError as exc:
            warning = f"No spec bands on the trend: {exc}"
    shown = redact_credentials(url)  # the label is shown on the pages
    try:
        client = DaemonClient(url, token or None)
    except ValueError as exc:
        return Connection(None, shown, False, specs, str(exc))
    if not config_path:
        # the daemon reports its rules; an unreachable one is reported by the page itself
        with contextlib.suppress(DaemonUnreachable, DaemonApiError, KeyError, ValueError):
            specs = SpecTable.from_sources(client.sources())
    return Connection(client, shown, False, specs, warning=warning)


def _embedded(settings: Settings) -> Connection:
    specs = SpecTable.from_config(embedded_config(settings.output_dir))
    try:
        daemon = get_embedded_daemon(str(settings.output_dir))
    except (DaemonStartError, OSError) as exc:
        return Connection(None, "embedded", True, specs, f"the embedded daemon failed: {exc}")
    assert daemon.api is not None
    return Connection(
        DaemonClient(daemon.api.url),
        "embedded demo daemon (sample video)",
        True,
        specs,
        db_path=daemon.config.store.path,
    )


def status_pill(card: NozzleCard) -> str:
    """HTML of the coloured status pill and the spec, one line under the number."""
    style = card.style
    return (
        f'<span class="sc-pill" style="background:{style.colour};color:{style.ink}">'
        f'{style.text}</span><span class="sc-spec">{card.spec_text}</span>'
    )


def nozzle_card(card: NozzleCard) -> None:
    """A card tinted by status (greyed out for an unreliable reading): nozzle, big smoothed
    angle, raw angle (or why it is unreliable), status pill and spec, spread, calibration."""
    with st.container(border=True, key=f"nozzle-{card.tint}-{card.source}-{card.nozzle_id}"):
        st.metric(card.label, card.value_text, delta=card.raw_text, delta_color="off",
                  delta_arrow="off")  # fmt: skip
        st.markdown(status_pill(card), unsafe_allow_html=True)
        for line in (card.spread_text, card.calibrated_text):
            if line:
                st.caption(line)
