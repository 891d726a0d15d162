"""ferry on its SQLite driver: the same system as ``ferry``, on a file per fresh database.

The bench hands every system a fresh PostgreSQL database; this one keeps its queue in a
SQLite file named after that database (under the bench's temporary folder), so the file
is as fresh as the database and every workload starts from an empty queue.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from bench.systems import Counter
from bench.systems.ferry_system import FerrySystem, StatsCounter
from ferry.drivers import sqlite_job_driver
from ferry.drivers._sqlite.target import Synchronous
from ferry.drivers.protocol import JobDriver

FOLDER = Path(tempfile.gettempdir()) / "ferry-bench-sqlite"
"""Where the files live; ``python -m bench`` deletes it after a run."""


def sqlite_file(dsn: str) -> Path:
    """The file standing in for the database ``dsn`` names."""
    return FOLDER / f"{urlsplit(dsn).path.strip('/')}.db"


def _system(name: str, synchronous: Synchronous) -> FerrySystem:
    def build(dsn: str) -> JobDriver:
        FOLDER.mkdir(exist_ok=True)
        return sqlite_job_driver(sqlite_file(dsn), synchronous=synchronous)

    async def counter(dsn: str) -> Counter:
        return StatsCounter(build(dsn))

    return FerrySystem(name, build, counter, f"sqlite_job_driver(path, synchronous={synchronous})")


SYSTEM = _system("ferry-sqlite", "full")
NORMAL_SYSTEM = _system("ferry-sqlite-normal", "normal")
