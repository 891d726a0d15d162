"""Every command takes a ``sqlite:///`` URL: it migrates, lists, reports and refuses on a
SQLite file exactly as it does on a Postgres schema."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ferry.drivers._sqlite.migrate import known_migrations

from .processes import INTEGRATION_DIR, REPO


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

    assert ferry(db_url, "queues", "pause", "mail")[0] == 0
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
