"""`spraycv daemon`: camera streams -> cone-angle measurements in SQLite, with an HTTP API."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import typer

from spraycv.cli.errors import ExitCode, exits, one_line

log = logging.getLogger("spraycv.cli.daemon")


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
    db: str | None = typer.Option(
        None, help="SQLite file, or postgresql://role@host/db (default from the config)."
    ),
    weights: Path | None = typer.Option(None, help="Model file (default: the shipped model)."),
    port: int | None = typer.Option(None, help="HTTP API port on 127.0.0.1 (0: any free)."),
) -> None:
    """Measure cone angles on camera streams until SIGTERM/SIGINT.

    Every inferred frame and nozzle measurement goes into SQLite (WAL); alarms are raised
    when a nozzle's smoothed angle leaves its spec. Every stderr line is a JSON log record,
    start errors included. Exits 0 after a graceful stop, 2 when it cannot start.
    """
    from spraycv.config.daemon import DaemonConfig
    from spraycv.config.loader import load_config, merge
    from spraycv.io.native_logs import quiet_native_logs
    from spraycv.stream.daemon import Daemon, DaemonStartError
    from spraycv.stream.database import is_server_url
    from spraycv.stream.logs import setup_json_logging

    setup_json_logging()  # before the config, so that its errors are JSON lines too
    quiet_native_logs()
    try:
        cfg = load_config(DaemonConfig, config, list(overrides or []))
        extra: dict = {}
        if source:
            extra["sources"] = source_entries(source)
        if db is not None:
            extra["store"] = {"url" if is_server_url(db) else "path": db}
        if weights is not None:
            extra["inference"] = {"weights": str(weights)}
        if port is not None:
            extra["api"] = {"port": port}
        cfg = DaemonConfig.model_validate(merge(cfg.model_dump(mode="json"), extra))
        setup_json_logging(cfg.log_level)
        runner = Daemon(cfg)
    except (ValueError, DaemonStartError, OSError) as exc:  # ConfigError, ValidationError too
        # the daemon's contract: every stderr line is JSON, start errors included
        log.error("cannot start", extra={"error": one_line(exc)})
        raise typer.Exit(int(ExitCode.BAD_REQUEST)) from None
    summary = runner.run_until_signal()
    typer.echo(json.dumps({"stopped": summary}))
