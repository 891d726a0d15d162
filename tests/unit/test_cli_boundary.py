"""The CLI's one error boundary: Ctrl-C and a database lost mid-command end a command
with an exit code and a line, never a traceback."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from ferry._cli import main


def _interrupted(main: Any, **_: Any) -> None:
    raise KeyboardInterrupt  # what the loop's run raises once Ctrl-C cancelled the command


def _connection_lost(main: Any, **_: Any) -> None:
    raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")


def test_ctrl_c_ends_a_command_with_exit_130_and_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("ferry._event_loop.run", _interrupted)
    assert main(["jobs", "show", "1", "--database-url", "postgresql://h/db"]) == 130
    assert capsys.readouterr().err == "ferry jobs show: interrupted\n"


def test_a_database_lost_mid_command_is_x_db_unreachable_in_the_envelope(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("ferry._event_loop.run", _connection_lost)
    url = "postgresql://app:s3cret@db/app"
    assert main(["jobs", "ls", "--json", "--database-url", url]) == 1
    out = capsys.readouterr().out
    assert '"code": "X_DB_UNREACHABLE"' in out and "app:***@db" in out and "s3cret" not in out
