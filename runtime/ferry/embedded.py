"""The embedded default: a PostgreSQL server inside the project when none is configured.

``ferry dev`` and the demo use ``DATABASE_URL`` when it is set; otherwise they start the
``pgserver`` PostgreSQL under ``.ferry/pgdata`` in the current directory and use the very
same Postgres driver on it — there is no second code path for development. The server
comes with ``ferry[embedded]`` (pgserver); without it, only the embedded server is refused
(``X_EXTRA_MISSING``): a ``DATABASE_URL`` works on a core install.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

from ferry._extras import require_extra
from ferry.drivers._postgres import PostgresJobDriver, postgres_job_driver

DEFAULT_DATA_DIR = Path(".ferry") / "pgdata"


def embedded_database_url(data_dir: Path = DEFAULT_DATA_DIR) -> str:
    """Start (or reuse) the embedded server under ``data_dir``; returns its DSN."""
    # pgserver narrates every start at INFO; ferry's own lines say where the queue is.
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        # pgserver asks platformdirs for a runtime dir it does not need; on a machine
        # without XDG_RUNTIME_DIR (containers, CI) that is a warning, not a problem.
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        require_extra("embedded", feature="the embedded PostgreSQL (no DATABASE_URL is set)")
        import pgserver

        data_dir.mkdir(parents=True, exist_ok=True)
        server = pgserver.get_server(  # type: ignore[attr-defined]
            data_dir.resolve(), cleanup_mode="stop"
        )
        return str(server.get_uri())


def database_url() -> tuple[str, str]:
    """The DSN to use and a description of where it points."""
    configured = os.environ.get("DATABASE_URL")
    if configured:
        return configured, "DATABASE_URL"
    return embedded_database_url(), f"embedded PostgreSQL ({DEFAULT_DATA_DIR})"


async def default_job_driver() -> tuple[PostgresJobDriver, str]:
    """A migrated Postgres driver on ``DATABASE_URL`` or the embedded server."""
    dsn, where = database_url()
    driver = postgres_job_driver(dsn)
    await driver.open()
    return driver, where
