"""Least-privilege grants on a fleet's server: daemons may only insert, dashboards only read.

The tables are owned by the role that migrates (`spraycv db migrate`); `spraycv db grant`
runs these statements as that owner (docs/fleet.md).
"""

from __future__ import annotations

import re

from spraycv.stream.schema import TABLES

_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")  # a plain identifier: safe to put in SQL


def checked_role(name: str) -> str:
    if not _ROLE.match(name):
        raise ValueError(f"role name {name!r}: use lower-case letters, digits and _")
    return name


def grant_statements(daemon_role: str, dashboard_role: str) -> list[str]:
    """GRANTs for an existing daemon role (insert) and dashboard role (select)."""
    daemon, dashboard = checked_role(daemon_role), checked_role(dashboard_role)
    tables = ", ".join(TABLES)
    return [
        f"GRANT USAGE ON SCHEMA public TO {daemon}, {dashboard}",
        # the daemon reads the schema version only, to refuse a schema it does not know
        f"GRANT SELECT ON spraycv_schema TO {daemon}, {dashboard}",
        f"GRANT INSERT ON {tables} TO {daemon}",
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {daemon}",
        f"GRANT SELECT ON {tables} TO {dashboard}",
    ]
