"""Record the stores ferry 0.1.0 writes, as the fixtures the upgrade test migrates forward.

Runs that release's own code (commit ``RELEASE``, taken with ``git archive`` into a
temporary directory) through ``build_old_stores.py`` on a fresh embedded PostgreSQL, a
SQLite file and a ``redis-server``, then dumps each store as text under
``tests/integration/upgrade/fixtures``: ``postgres.sql`` (``pg_dump --inserts`` of the
schema), ``sqlite.sql`` (``iterdump``) and ``redis.json`` (every key of the prefix, by
type). The stores are named ``upgrade_src``; the test loads them under names of its own.

    .venv/bin/python scripts/upgrade/record.py
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pgserver
import redis

RELEASE = "fbb8283"
NAME = "upgrade_src"
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "integration" / "upgrade" / "fixtures"


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="ferry-upgrade-"))
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", RELEASE, "runtime"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
        FIXTURES.mkdir(parents=True, exist_ok=True)
        record_postgres(work)
        record_sqlite(work)
        record_redis(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build(work: Path, *args: str) -> None:
    """Run the builder under the old release's code."""
    env = {**os.environ, "PYTHONPATH": str(work / "runtime")}
    builder = Path(__file__).with_name("build_old_stores.py")
    subprocess.run([sys.executable, str(builder), *args], check=True, env=env, cwd=work)


def record_postgres(work: Path) -> None:
    server = pgserver.get_server(str(work / "pg"), cleanup_mode="stop")
    try:
        dsn = server.get_uri()
        build(work, "postgres", dsn, NAME)
        pg_dump = Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_dump"
        dump = subprocess.run(
            [str(pg_dump), f"--dbname={dsn}", f"--schema={NAME}", "--inserts", "--no-owner",
             "--no-privileges"],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        # The dump's header names the server version: drop it, so re-recording on another
        # build changes nothing but the data.
        lines = [line for line in dump.splitlines() if not line.startswith("-- Dumped ")]
        (FIXTURES / "postgres.sql").write_text("\n".join(lines) + "\n")
    finally:
        server.cleanup()


def record_sqlite(work: Path) -> None:
    path = work / "old.db"
    build(work, "sqlite", str(path))
    connection = sqlite3.connect(path)
    try:
        (FIXTURES / "sqlite.sql").write_text("\n".join(connection.iterdump()) + "\n")
    finally:
        connection.close()


def record_redis(work: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(work)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        client = redis.Redis(port=port, decode_responses=True)
        for _ in range(500):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.01)
        build(work, "redis", f"redis://127.0.0.1:{port}/0", NAME)
        keys: dict[str, Any] = {}
        for key in sorted(client.scan_iter(match="{" + NAME + "}:*")):
            kind = client.type(key)
            if kind == "hash":
                keys[key] = {"hash": client.hgetall(key)}
            elif kind == "zset":
                keys[key] = {"zset": client.zrange(key, 0, -1, withscores=True)}
            elif kind == "set":
                keys[key] = {"set": sorted(client.smembers(key))}
            elif kind == "string":
                keys[key] = {"string": client.get(key)}
            else:
                raise SystemExit(f"key {key} is a {kind}, which this recorder does not dump")
        (FIXTURES / "redis.json").write_text(json.dumps(keys, indent=1, sort_keys=True) + "\n")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
