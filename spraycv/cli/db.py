"""`spraycv db`: the owner's chores on a fleet's database (migrate, grant roles, retention)."""

from __future__ import annotations

import time

import typer

from spraycv.cli.errors import ExitCode, exits

db_app = typer.Typer(help="Schema, roles and retention of a fleet's database (docs/fleet.md).",
                     no_args_is_help=True)  # fmt: skip

URL = typer.Argument(..., help="postgresql://owner@host/db (or a SQLite file).")


def _store_errors() -> tuple[type[BaseException], ExitCode]:
    from spraycv.stream.database import StoreError

    return (StoreError, ValueError), ExitCode.BAD_REQUEST


@db_app.command()
@exits(_store_errors())
def migrate(url: str = URL) -> None:
    """Create or migrate the schema to this spraycv's version (run as the owner)."""
    from spraycv.stream.database import open_database
    from spraycv.stream.schema import SCHEMA_VERSION, prepare_schema

    db = open_database(url)
    try:
        prepare_schema(db)
    finally:
        db.close()
    typer.echo(f"schema version {SCHEMA_VERSION}")


@db_app.command()
@exits(_store_errors())
def grant(
    url: str = URL,
    daemon_role: str = typer.Option("spraycv_daemon", help="Existing role the daemons log in as."),
    dashboard_role: str = typer.Option("spraycv_dashboard", help="Existing role of dashboards."),
) -> None:
    """Daemons may only insert, dashboards may only read."""
    from spraycv.stream.database import open_database
    from spraycv.stream.roles import grant_statements

    db = open_database(url)
    try:
        for statement in grant_statements(daemon_role, dashboard_role):
            db.execute(statement)
    finally:
        db.close()


@db_app.command()
@exits(_store_errors())
def prune(
    url: str = URL, days: float = typer.Option(..., min=0.0, help="Keep this many days.")
) -> None:
    """Retention: delete rows older than DAYS (run daily, e.g. from cron, as the owner)."""
    from spraycv.stream.database import open_database
    from spraycv.stream.schema import prune as prune_rows

    db = open_database(url)
    try:
        prune_rows(db, time.time() - days * 86400)
    finally:
        db.close()
