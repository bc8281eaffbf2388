"""`spraycv dashboard`: the Streamlit field dashboard (embedded demo daemon by default)."""

from __future__ import annotations

import os

import typer


def dashboard(
    port: int = typer.Option(8501, help="Port on 127.0.0.1."),
    daemon_url: str | None = typer.Option(
        None,
        help="A running daemon's API (default: $SPRAYCV_DAEMON_URL, else an embedded "
        "daemon on the bundled sample video with the shipped model).",
    ),
    daemon_config: str | None = typer.Option(
        None, help="That daemon's YAML config, for the spec bands of the trend chart."
    ),
    db: str | None = typer.Option(
        None,
        help="A fleet's database (postgresql://role@host/db, or a SQLite file): the "
        "Fleet view and History over every machine (default: $SPRAYCV_DB).",
    ),
) -> None:
    """Start the dashboard on http://127.0.0.1:PORT (Ctrl+C stops it)."""
    from spraycv.dashboard.launch import dashboard_command

    env = dict(os.environ)
    if daemon_url:
        env["SPRAYCV_DAEMON_URL"] = daemon_url
    if daemon_config:
        env["SPRAYCV_DAEMON_CONFIG"] = daemon_config
    if db:
        env["SPRAYCV_DB"] = db
    command = dashboard_command(port, env)
    typer.echo(f"spraycv dashboard on http://127.0.0.1:{port}", err=True)
    # exec: Ctrl+C and SIGTERM go straight to Streamlit, which shuts the embedded daemon down
    os.execve(command[0], command, env)
