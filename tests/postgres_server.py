"""A real PostgreSQL for the tests: `initdb` and `pg_ctl` in a temporary folder, reached only
through a unix socket in that folder (no TCP port: no race for a free port, nothing
reachable from outside). Debian's `postgresql` package provides the binaries
(scripts/apt-packages.txt); tests skip, saying so, where they are missing.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

SUPERUSER = "postgres"
PORT = 5432  # only names the socket file (.s.PGSQL.5432) in the private folder


def postgres_bindir() -> Path | None:
    """Where initdb and pg_ctl are: pg_config's bindir, Debian's versioned folder, or PATH."""
    candidates: list[Path] = []
    if shutil.which("pg_config"):
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(Path(found.stdout.strip()))
    # newest version first (a numeric sort: 9 < 15)
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[4]))
    candidates += [Path(p) for p in reversed(versions)]
    if shutil.which("initdb"):
        candidates.append(Path(shutil.which("initdb") or "").parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def runuser() -> str:
    """util-linux's runuser: on PATH, or in /usr/sbin or /sbin, which a non-login root shell's
    PATH may leave out."""
    found = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError("runuser not found (util-linux): root runs PostgreSQL through it")
    return found


class PostgresServer:
    """One cluster in a temporary folder; start(), stop(), kill() (an immediate stop, as a
    crash), start() again on the same data, and remove() at the end."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="spraycv-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root
        # initdb refuses to run as root: as root, the server runs as Debian's postgres user
        self._as = [runuser(), "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.root, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                  "--no-instructions", "-E", "UTF8")  # fmt: skip

    def _run(self, tool: str, *args: str) -> None:
        command = [*self._as, str(self.bindir / tool), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stdout}\n{done.stderr}")

    def start(self, fsync: bool = False) -> None:
        """fsync off by default: a killed server loses nothing the OS holds, and tests of a
        shared machine wait less on the disk (the benchmark turns it on)."""
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket_dir}'"
            f" -c port={PORT} -c fsync={'on' if fsync else 'off'} -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                  "-w", "-t", "60", "-o", options, "start")  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def kill(self) -> None:
        """Stop at once, as a crash does (clients see their connections drop)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(RuntimeError):  # already stopped
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@/{database}?host={self.socket_dir}&port={PORT}"

    def new_database(self) -> str:
        """A fresh, empty database (one per test: tests never see each other's rows)."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name

    def admin(self, sql: str, database: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(sql)
