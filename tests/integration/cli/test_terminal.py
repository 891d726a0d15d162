"""What a person at a terminal gets from ``ferry``: stored text that cannot command the
terminal, colour only on a TTY, the result alone on stdout, ``--version``, the real cause
of an application that fails to import, and a typo'd queue that is not paused."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from support.processes import REPO

from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import EnqueueRequest

from .conftest import Ferry, cli_env

HOSTILE = "evil[/bold][red]\x1b[2J\x1b]8;;https://attacker.example\x07link\x1b]8;;\x07\r\u202e"
"""Rich markup that does not close, a clear-screen, a hyperlink, a carriage return and a
right-to-left override: every way stored text could try to command a terminal."""


async def _hostile_run(driver: PostgresJobDriver) -> str:
    result = await driver.enqueue(
        EnqueueRequest(
            name=HOSTILE,
            queue=f"q{HOSTILE}",
            payload={"note": HOSTILE},
            idempotency_key=f"key{HOSTILE}",
            max_attempts=1,
            tenant=HOSTILE,
        )
    )
    return result.job_id


async def test_stored_text_is_shown_escaped_never_as_markup_or_terminal_commands(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    run_id = await _hostile_run(seeded)
    listed = ferry("jobs", "ls", "--json")
    assert listed.code == 0, listed.stderr
    assert listed.envelope["data"]["runs"][0]["name"] == HOSTILE  # JSON keeps the data as is
    for command in (("jobs", "ls"), ("jobs", "show", run_id), ("jobs", "stats")):
        shown = ferry(*command)
        assert shown.code == 0, shown.stderr
        assert not any(ch in shown.stdout for ch in "\x1b\x07\r\u202e"), command
        assert "\\x1b" in shown.stdout and "evil[/bo" in shown.stdout, shown.stdout


async def test_a_terminal_gets_colour_and_a_pipe_plain_text(
    seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> None:
    env = {k: v for k, v in cli_env(postgres_dsn, pg_schema).items() if k != "NO_COLOR"}
    env["TERM"] = "xterm"
    on_tty = _jobs_ls_on_a_terminal(env)
    assert "\x1b[" in on_tty and "dead" in on_tty  # coloured state words
    piped = _jobs_ls(env)
    assert "\x1b" not in piped and "dead" in piped
    assert "\x1b" not in _jobs_ls({**env, "NO_COLOR": "1"})


def _jobs_ls(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ferry", "jobs", "ls"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _jobs_ls_on_a_terminal(env: dict[str, str]) -> str:
    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "ferry", "jobs", "ls"],
        env=env,
        cwd=REPO,
        stdout=follower,
        stderr=subprocess.PIPE,
        timeout=120,
    )
    os.close(follower)
    assert done.returncode == 0, done.stderr
    return _drain(leader)


def _drain(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode()


def test_version_prints_the_installed_version(ferry: Ferry) -> None:
    from importlib.metadata import version

    done = ferry("--version")
    assert (done.code, done.stdout.strip(), done.stderr) == (0, f"ferry {version('ferry')}", "")


def test_an_app_failing_inside_its_import_shows_the_real_cause_and_traceback(
    ferry: Ferry, postgres_dsn: str, pg_schema: str, tmp_path: Path
) -> None:
    (tmp_path / "broken_app.py").write_text("import os\nimport not_installed_anywhere_x\n")
    (tmp_path / "typo_app.py").write_text("def f(:\n    pass\n")
    env = cli_env(postgres_dsn, pg_schema)
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"

    missing = ferry("tasks", "list", "--app", "broken_app", "--json", env=env)
    [finding] = missing.envelope["findings"]
    assert finding["code"] == "X_APP_IMPORT"
    assert "not_installed_anywhere_x" in finding["message"]
    assert "broken_app.py:2" in finding["message"]
    assert "install the package 'not_installed_anywhere_x'" in finding["fix"]
    assert "Traceback (most recent call last)" in missing.stderr
    assert "directory that contains the package" not in missing.stdout + missing.stderr

    syntax = ferry("tasks", "list", "--app", "typo_app", env=env)
    assert syntax.code == 1 and syntax.stdout == ""
    assert "X_APP_IMPORT: application module 'typo_app' raised while it was imported: " in (
        syntax.stderr
    )
    assert "SyntaxError" in syntax.stderr and "typo_app.py:1" in syntax.stderr

    absent = ferry("tasks", "list", "--app", "no_such_app_module", "--json", env=env)
    [finding] = absent.envelope["findings"]
    assert finding["code"] == "X_INVARIANT" and "directory that contains" in finding["fix"]


async def test_pausing_a_queue_no_run_has_named_asks_for_create(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    typo = ferry("queues", "pause", "latre", "--json")
    assert typo.code == 1
    [finding] = typo.envelope["findings"]
    assert finding["code"] == "X_QUEUE_UNKNOWN" and "later" in finding["message"]
    assert "--create" in finding["fix"]
    assert not any(q.paused for q in await seeded.stats())
    assert {q.queue for q in await seeded.stats()} == {"default", "later"}

    created = ferry("queues", "pause", "latre", "--create", "--json")
    assert created.code == 0 and created.envelope["data"] == {"queue": "latre", "paused": True}
    known = ferry("queues", "pause", "later", "--json")
    assert known.code == 0 and known.envelope["data"] == {"queue": "later", "paused": True}
