"""``ferry dev`` prints how other commands reach its database, ready to paste."""

from __future__ import annotations

import argparse

from ferry._cli.dev_command import reach_it


def _line(url: str, schema: str = "ferry") -> str:
    return reach_it(argparse.Namespace(database_url=url, schema=schema))


def test_the_embedded_servers_url_is_printed_whole_socket_path_and_all() -> None:
    url = "postgresql://postgres:@/postgres?host=/home/me/app/.ferry/pgdata"
    assert _line(url).startswith(f"database: export DATABASE_URL='{url}'")


def test_a_password_is_never_printed_and_a_schema_is_named_when_not_the_default() -> None:
    line = _line("postgresql://app:s3cret@db:5432/app", schema="jobs")
    assert "s3cret" not in line
    assert "DATABASE_URL='postgresql://app:***@db:5432/app' FERRY_SCHEMA=jobs" in line


def test_a_sqlite_file_is_printed_as_given() -> None:
    assert "export DATABASE_URL=sqlite:///jobs.db " in _line("sqlite:///jobs.db", schema="x")
