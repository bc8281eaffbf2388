"""The daemon's config schema, the shipped sample config and the --source shorthand."""

from __future__ import annotations

from pathlib import Path

import pytest

from spraycv.cli.daemon import source_entries
from spraycv.config.daemon import DaemonConfig, SpecRule
from spraycv.config.loader import ConfigError, load_config
from spraycv.paths import REPO_ROOT


def test_the_sample_config_is_valid() -> None:
    cfg = load_config(DaemonConfig, REPO_ROOT / "configs" / "daemon" / "example.yaml")
    boom = cfg.sources[0]
    assert boom.rule_for(3, cfg.spec) == SpecRule(nominal_deg=80, tolerance_deg=4)
    assert boom.rule_for(0, cfg.spec) == SpecRule(nominal_deg=110, tolerance_deg=5)
    assert cfg.sources[1].rule_for(0, cfg.spec) is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"sources": [{"name": "a", "url": "x"}, {"name": "a", "url": "y"}]}, "repeated: a"),
        ({"sources": [{"name": "a b", "url": "x"}]}, "sources.0.name"),
        ({"api": {"host": "0.0.0.0"}}, "set api.token"),
        ({"spec": {"nominal_deg": 110, "tolerance_deg": -1}}, "spec.tolerance_deg"),
        ({"tracking": {"smoothing": "mean"}}, "tracking.smoothing"),
        ({"store": {"pathh": "x"}}, "store.pathh"),
        ({"api": {"token": " "}}, "api.token is blank"),
        ({"api": {"token": ""}}, "api.token is blank"),
        ({"api": {"host": "0.0.0.0", "token": "\t "}}, "api.token is blank"),
    ],
)
def test_invalid_configs_name_the_key(tmp_path: Path, data: dict, message: str) -> None:
    import yaml

    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=message):
        load_config(DaemonConfig, path)


def test_token_allows_another_host() -> None:
    assert DaemonConfig.model_validate({"api": {"host": "0.0.0.0", "token": "t"}}).api.token


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (["rtsp://h/s"], [{"name": "cam0", "url": "rtsp://h/s"}]),
        (["left=rtsp://h/s"], [{"name": "left", "url": "rtsp://h/s"}]),
        (["http://h/v?a=1"], [{"name": "cam0", "url": "http://h/v?a=1"}]),
        (
            ["0", "b-2=/dev/video2"],
            [{"name": "cam0", "url": "0"}, {"name": "b-2", "url": "/dev/video2"}],
        ),
    ],
)
def test_source_shorthand(given: list[str], expected: list[dict]) -> None:
    assert source_entries(given) == expected


@pytest.mark.parametrize("key", ["idle_search_every_s", "idle_tiles_every_s"])
def test_the_idle_search_setting_is_read_under_its_old_name_too(tmp_path: Path, key: str) -> None:
    """Before the turned looks (experiments row 174) the setting was named for the tiles."""
    path = tmp_path / "daemon.yaml"
    path.write_text(f"inference:\n  {key}: 2.5\n")
    assert load_config(DaemonConfig, path).inference.idle_search_every_s == 2.5
