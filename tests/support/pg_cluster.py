"""A PostgreSQL primary and its streaming standby for the failover tests, from the embedded
server's own binaries (``pgserver`` ships ``initdb``, ``pg_ctl``, ``pg_basebackup`` and
``pg_rewind``).

Each node is a data directory of this test's and a free loopback port; the nodes speak TCP
only (no socket file, so nothing collides with another test's server). Run as root, every
command runs as the unprivileged user the embedded server uses (PostgreSQL refuses root).
A standby follows its primary by physical streaming replication; ``promote`` makes it a
primary, ``rewind_onto`` turns a former primary into a standby of the new one — the
moves a managed service, Patroni or CloudNativePG make in a failover and a switchover.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from pgserver._commands import POSTGRES_BIN_PATH
from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

from support.processes import free_port

USER = "postgres"
"""The database superuser every node has (trust authentication on loopback)."""
COMMAND_BOUND_S = 120
"""How long one ``pg_ctl``/``pg_basebackup``/``pg_rewind`` may take (a guard, not a timing)."""

SETTINGS = """
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
wal_level = replica
max_wal_senders = 10
hot_standby = on
wal_log_hints = on
wal_keep_size = '512MB'
fsync = off
log_min_messages = warning
"""
"""Every node's settings: streaming replication, hints for ``pg_rewind``. (``fsync = off``
only matters when the machine itself crashes; a killed server loses nothing by it.)"""


def _system_user() -> str | None:
    """The user to run PostgreSQL's commands as: the embedded server's when we are root."""
    if os.geteuid() != 0:
        return None
    ensure_user_exists("pgserver")
    ensure_prefix_permissions(POSTGRES_BIN_PATH)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent, 0o555)
    return "pgserver"


@dataclass
class PgNode:
    """One PostgreSQL server: a data directory, a port, and the commands that move it."""

    name: str
    data: Path
    port: int = field(default_factory=free_port)
    user: str | None = field(default_factory=_system_user)

    @property
    def log(self) -> Path:
        return self.data.parent / f"{self.name}.log"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def dsn(self) -> str:
        """A URL of this node alone."""
        return f"postgresql://{USER}@{self.address}/postgres"

    def run(self, tool: str, *args: str) -> str:
        """Run one of the server's binaries as the server's user; its output."""
        done = subprocess.run(
            [str(POSTGRES_BIN_PATH / tool), *args],
            user=self.user,
            cwd=self.data.parent,
            capture_output=True,
            text=True,
            timeout=COMMAND_BOUND_S,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def _owned(self) -> None:
        """An empty data directory the server's user owns (mode 0700)."""
        self.data.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.user is not None:
            ensure_prefix_permissions(self.data)
            entry = pwd.getpwnam(self.user)
            os.chown(self.data, entry.pw_uid, entry.pw_gid)
            self.log.touch()
            os.chown(self.log, entry.pw_uid, entry.pw_gid)

    def init_primary(self) -> None:
        """A new cluster, configured to stream to standbys; started."""
        self._owned()
        self.run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "--encoding=utf8")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(SETTINGS)
        self.start()

    def synchronous_standby(self) -> None:
        """Acknowledge a commit only once a standby has it (``synchronous_standby_names``),
        set on this primary alone: a standby cloned earlier does not carry it, so once
        promoted it does not wait for a standby of its own."""
        self.sql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        self.sql("SELECT pg_reload_conf()")

    def sql(self, statement: str) -> str:
        """Run one statement on this node (``psql``); its output."""
        return self.run(
            "psql",
            *("-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", "postgres"),
            *("-X", "-A", "-t", "-c", statement),
        )

    def clone_standby_of(self, primary: PgNode) -> None:
        """A new standby streaming from ``primary`` (a base backup of it); started."""
        self._owned()
        self.run(
            "pg_basebackup",
            *("-h", "127.0.0.1", "-p", str(primary.port), "-U", USER),
            *("-D", str(self.data), "-X", "stream", "-R", "-c", "fast"),
        )
        self.start()

    def rewind_onto(self, primary: PgNode) -> None:
        """This former primary (stopped) made a standby of ``primary``: its diverged WAL
        rewound (``pg_rewind``), then started streaming."""
        source = f"host=127.0.0.1 port={primary.port} user={USER} dbname=postgres"
        self.run("pg_rewind", "-D", str(self.data), f"--source-server={source}", "-R")
        self.start()

    def start(self) -> None:
        self.run(
            "pg_ctl",
            *("-D", str(self.data), "-l", str(self.log), "-o", f"-p {self.port}"),
            *("-w", "-t", str(COMMAND_BOUND_S), "start"),
        )

    def stop(self, mode: str = "fast") -> None:
        """``fast``: a clean shutdown (a standby receives every WAL record first);
        ``immediate``: the server's processes die at once, as in a crash."""
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def promote(self) -> None:
        """Make this standby a primary (waits until it accepts writes)."""
        self.run("pg_ctl", "-D", str(self.data), "-w", "promote")

    def stop_quietly(self) -> None:
        """Stop the server if it runs (the test's clean-up)."""
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [
                    str(POSTGRES_BIN_PATH / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-m",
                    "immediate",
                    "stop",
                ],
                user=self.user,
                capture_output=True,
                timeout=COMMAND_BOUND_S,
            )


def multi_host_dsn(*addresses: str) -> str:
    """One URL naming every ``host:port``, connecting to whichever accepts writes (libpq's
    and asyncpg's ``target_session_attrs=read-write``): what a fleet is configured with."""
    return f"postgresql://{USER}@{','.join(addresses)}/postgres?target_session_attrs=read-write"
