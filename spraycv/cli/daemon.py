"""`spraycv daemon`: camera streams -> cone-angle measurements in SQLite, with an HTTP API."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from spraycv.cli.errors import bad_request, exits, one_line


def source_entries(sources: list[str]) -> list[dict[str, str]]:
    """['rtsp://a', 'left=http://b'] -> [{'name': 'cam0', 'url': ...}, {'name': 'left', ...}]."""
    entries = []
    for i, item in enumerate(sources):
        name, sep, url = item.partition("=")
        # "name=url" only when the part before "=" is a plain name (URLs may hold "=" too)
        if sep and name.replace("_", "").replace("-", "").isalnum() and "/" not in name:
            entries.append({"name": name, "url": url})
        else:
            entries.append({"name": f"cam{i}", "url": item})
    return entries


@exits()
def daemon(
    overrides: list[str] = typer.Argument(
        None, help="Config overrides, e.g. api.port=9000 spec.nominal_deg=110"
    ),
    config: Path | None = typer.Option(None, "--config", "-c", help="Daemon YAML config."),
    source: list[str] = typer.Option(
        None, "--source", "-s", help="[NAME=]URL, file or camera index (repeatable)."
    ),
    db: Path | None = typer.Option(None, help="SQLite file (default from the config)."),
    weights: Path | None = typer.Option(None, help="Model file (default: the shipped model)."),
    port: int | None = typer.Option(None, help="HTTP API port on 127.0.0.1 (0: any free)."),
) -> None:
    """Measure cone angles on camera streams until SIGTERM/SIGINT.

    Every inferred frame and nozzle measurement goes into SQLite (WAL); alarms are raised
    when a nozzle's smoothed angle leaves its spec. Logs are JSON lines on stderr. Exits 0
    after a graceful stop, 2 when it cannot start.
    """
    from spraycv.config.daemon import DaemonConfig
    from spraycv.config.loader import load_config, merge
    from spraycv.stream.daemon import Daemon, DaemonStartError
    from spraycv.stream.logs import setup_json_logging

    try:  # only the config: a ValueError once it runs is no bad request
        cfg = load_config(DaemonConfig, config, list(overrides or []))
        extra: dict = {}
        if source:
            extra["sources"] = source_entries(source)
        if db is not None:
            extra["store"] = {"path": str(db)}
        if weights is not None:
            extra["inference"] = {"weights": str(weights)}
        if port is not None:
            extra["api"] = {"port": port}
        cfg = DaemonConfig.model_validate(merge(cfg.model_dump(mode="json"), extra))
    except ValueError as exc:  # ConfigError, pydantic's ValidationError
        raise bad_request(one_line(exc)) from None
    setup_json_logging(cfg.log_level)
    try:
        runner = Daemon(cfg)
    except DaemonStartError as exc:
        raise bad_request(str(exc)) from None
    if runner.api is not None:
        typer.echo(f"spraycv daemon: API on {runner.api.url}", err=True)
    summary = runner.run_until_signal()
    typer.echo(json.dumps({"stopped": summary}))
