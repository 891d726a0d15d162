"""Every command takes a ``sqlite:///`` URL: it migrates, lists, reports and refuses on a
SQLite file exactly as it does on a Postgres schema."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.processes import INTEGRATION_DIR, REPO

from ferry.drivers import sqlite_job_driver
from ferry.drivers._sqlite.migrate import known_migrations
from ferry.drivers.protocol import EnqueueRequest


def ferry(db_url: str, *args: str) -> tuple[int, dict[str, Any]]:
    """Run ``ferry <args> --json`` on the file; its exit code and envelope."""
    env = {**os.environ, "DATABASE_URL": db_url, "PYTHONPATH": str(INTEGRATION_DIR)}
    env.pop("FERRY_SCHEMA", None)
    done = subprocess.run(
        [sys.executable, "-m", "ferry", *args, "--json"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_migrate_doctor_and_the_run_commands_work_on_a_sqlite_file(
    db_url: str, db_path: Path
) -> None:
    code, doctor = ferry(db_url, "doctor")
    assert code == 1 and [f["code"] for f in doctor["findings"]] == ["X_DB_UNREACHABLE"]
    assert not db_path.exists(), "the doctor creates nothing, not even the file"

    code, migrated = ferry(db_url, "migrate")
    assert code == 0 and migrated["data"]["applied"] == [m.version for m in known_migrations()]
    assert str(db_path) in migrated["summary"]

    code, doctor = ferry(db_url, "doctor")
    assert code == 0, doctor
    checks = {c["name"]: c for c in doctor["data"]["checks"]}
    assert checks["database"]["detail"].startswith("SQLite ")
    assert all(c["ok"] for c in checks.values())

    assert ferry(db_url, "queues", "pause", "mail", "--create")[0] == 0  # no run named it yet
    code, stats = ferry(db_url, "jobs", "stats")
    assert code == 0 and stats["data"]["queues"][0]["paused"] is True, stats
    code, listed = ferry(db_url, "jobs", "ls")
    assert code == 0 and listed["data"]["runs"] == []


@pytest.mark.parametrize(
    "command",
    [
        ["jobs", "ls"],
        ["migrate"],
        ["doctor"],
        ["worker", "--app", "sqlite_driver.app", "--metrics-port", "0"],
    ],
    ids=" ".join,
)
def test_every_command_refuses_a_file_newer_than_this_ferry(
    db_url: str, db_path: Path, command: list[str]
) -> None:
    assert ferry(db_url, "migrate")[0] == 0
    future = known_migrations()[-1].version + 1
    connection = sqlite3.connect(db_path, isolation_level=None)
    connection.execute(
        "INSERT INTO ferry_migrations (version, name, applied_at_ms, checksum) "
        f"VALUES ({future}, 'future', 0, 'x')"
    )
    connection.close()
    code, refused = ferry(db_url, *command)
    assert code == 1
    [finding] = refused["findings"]
    assert finding["code"] == "X_SCHEMA_NEWER" and f"{future:04d}_future" in finding["message"]


def test_a_url_no_driver_serves_is_refused_naming_the_schemes() -> None:
    code, refused = ferry("mysql://db/x", "jobs", "ls")
    assert code == 1
    [finding] = refused["findings"]
    assert finding["code"] == "X_DB_URL_INVALID" and "sqlite:///" in finding["fix"]


def _enqueue_into(path: Path, count: int) -> None:
    """``count`` queued runs on the file at ``path`` (migrated by the enqueue)."""

    async def enqueue() -> None:
        driver = sqlite_job_driver(path)
        try:
            await driver.enqueue_many(
                [
                    EnqueueRequest(
                        name="noop",
                        queue="default",
                        payload={"n": n},
                        idempotency_key=f"noop:{n}",
                        max_attempts=3,
                    )
                    for n in range(count)
                ]
            )
        finally:
            await driver.close()

    asyncio.run(enqueue())


def test_a_drain_moves_a_queue_from_one_sqlite_file_to_another(tmp_path: Path) -> None:
    source, target = tmp_path / "old.db", tmp_path / "new.db"
    _enqueue_into(source, 7)
    code, drained = ferry(
        f"sqlite:///{source}", "jobs", "drain", "--to", f"sqlite:///{target}", "--batch", "3"
    )
    assert code == 0, drained
    assert f"sqlite:///{target}" in json.dumps(drained["data"])
    code, left = ferry(f"sqlite:///{source}", "jobs", "ls")
    assert code == 0 and left["data"]["runs"] == []
    code, moved = ferry(f"sqlite:///{target}", "jobs", "ls")
    assert code == 0 and len(moved["data"]["runs"]) == 7


def test_a_drain_moves_a_queue_from_sqlite_to_postgres(
    tmp_path: Path, postgres_dsn: str, pg_schema: str
) -> None:
    source = tmp_path / "jobs.db"
    _enqueue_into(source, 5)
    code, drained = ferry(
        f"sqlite:///{source}", "jobs", "drain", "--to", postgres_dsn, "--schema", pg_schema
    )
    assert code == 0, drained
    code, moved = ferry(postgres_dsn, "jobs", "ls", "--schema", pg_schema)
    assert code == 0 and len(moved["data"]["runs"]) == 5


def test_a_drain_refuses_one_file_named_twice(tmp_path: Path) -> None:
    source = tmp_path / "jobs.db"
    _enqueue_into(source, 1)
    (tmp_path / "link.db").symlink_to(source)
    code, refused = ferry(
        f"sqlite:///{source}", "jobs", "drain", "--to", f"sqlite:///{tmp_path / 'link.db'}"
    )
    assert code == 1
    assert [f["code"] for f in refused["findings"]] == ["X_DRAIN_SAME_STORE"]
