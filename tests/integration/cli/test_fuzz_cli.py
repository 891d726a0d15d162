"""Property: any command line, through the real entry point (``ferry._cli.main`` in this
process), ends in an ``X_*`` refusal or a success — never a traceback, never a non-envelope
under ``--json`` — and a refused command changed nothing in the store. After the fuzz a
worker still claims and completes a normal run.

Budget: 150 random command lines per test (each a whole command, connection and all) on
a SQLite file seeded by ``cli_app``; the long-running roles get an unreachable database,
so every check of their flags runs and none starts serving.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.fuzz import normal_run_state, words

from ferry._cli import main
from ferry._clock import FrozenClock
from ferry.drivers import sqlite_job_driver

UNREACHABLE = "postgresql://127.0.0.1:1/none"
"""Nothing listens on port 1: a role's options are checked, then its database refuses."""
word = words  # "[/bold]" and terminal escapes included: tables print stored text as text
run_id = st.sampled_from(["1", "2", "3", "4", "999"]) | word
TIMED = ["--since", "--until", "--window", "--retain-completed", "--retain-dead"]
FILTERS = [
    "--queue", "--job", "--state", "--view", "--tenant", "--since", "--until", "--key",
    "--error-code", "--error-text", "--input",
]  # fmt: skip
JOB_LS = [*FILTERS, "--limit", "--before"]


def _flags(names: list[str]) -> st.SearchStrategy[list[str]]:
    pairs = st.lists(st.tuples(st.sampled_from(names), word), max_size=4)
    return pairs.map(lambda chosen: [part for pair in chosen for part in pair])


def _command(*head: str, flags: list[str] = (), tail: Any = None) -> st.SearchStrategy[list[str]]:  # type: ignore[assignment]
    rest = st.tuples(
        tail if tail is not None else st.just(()), _flags(list(flags)) if flags else st.just([])
    )
    return rest.map(lambda parts: [*head, *parts[0], *parts[1]])


STORE_COMMANDS = st.one_of(
    _command("jobs", "ls", flags=JOB_LS),
    _command("jobs", "show", tail=st.tuples(run_id)),
    _command("jobs", "show", tail=st.tuples(run_id, st.just("--full"))),
    _command("jobs", "retry", tail=st.tuples(run_id)),
    _command("jobs", "cancel", tail=st.tuples(run_id)),
    _command("jobs", "stats", flags=["--window"]),
    _command(
        "jobs",
        "bulk",
        tail=st.tuples(
            st.sampled_from(["retry", "cancel", "delete"]) | word,
            st.sampled_from(["--dry-run", "--yes"]),
        ),
        flags=[*FILTERS, "--selection"],
    ),
    _command("workers", "ls"),
    _command("jobs", "drain", flags=["--to", "--queue", "--batch"]),
    _command("queues", "pause", tail=st.tuples(word)),
    _command("queues", "resume", tail=st.tuples(word)),
    _command("tasks", "list"),
    _command("tasks", "show", tail=st.tuples(word), flags=["--count"]),
    _command("tasks", "pause", tail=st.tuples(word)),
    _command("tasks", "resume", tail=st.tuples(word)),
    _command("tasks", "run-now", tail=st.tuples(word)),
    _command(
        "prune",
        flags=[
            "--retain-completed",
            "--retain-dead",
            "--retain-published",
            "--retain-webhook-attempts",
            "--prune-batch",
        ],
    ),
    _command("doctor", flags=["--max-skew-ms"]),
    _command("migrate"),
    st.lists(word, max_size=4),  # any words at all
)
ROLE_COMMANDS = st.one_of(
    _command(
        "worker",
        flags=[
            "--concurrency",
            "--drain-seconds",
            "--lease-seconds",
            "--tenant-cap",
            "--total-cap",
            "--queue-caps",
            "--heartbeat-seconds",
            "--queues",
            "--metrics-port",
            "--loop-lag-budget-seconds",
            "--prune-every",
            "--prune-batch",
        ],
    ),
    _command(
        "scheduler", flags=["--tick-seconds", "--lease-seconds", "--metrics-port", *TIMED[3:]]
    ),
    _command("relay", flags=["--outbox-lease-seconds", "--outbox-batch", "--metrics-port"]),
    _command("admin", flags=["--port", "--trust-proxy", "--host"]),
    _command("mcp", flags=["--port", "--trust-proxy", "--transport"]),
    _command("dev", flags=["--concurrency", "--lease-seconds", "--drain-seconds", "--port"]),
)


def _digest(path: Path) -> str:
    """Everything stored in the SQLite file, as one hash (the file is a few rows)."""
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [(t, sorted(map(repr, db.execute(f'SELECT * FROM "{t}"')))) for t in sorted(tables)]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file with ``cli_app``'s seed: a completed, a dead and a queued run."""
    import importlib
    import sys

    from support.processes import CLI_APP_DIR

    sys.path.insert(0, str(CLI_APP_DIR))
    cli_app: ModuleType = importlib.import_module("cli_app")
    path = tmp_path_factory.mktemp("fuzz") / "ferry.db"

    async def seed() -> None:
        driver = sqlite_job_driver(str(path), clock=FrozenClock())
        await cli_app.seed(driver, driver.clock)  # type: ignore[arg-type]
        await driver.close()

    asyncio.run(seed())
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """``ferry <argv> --json`` in this process: its exit code 0 or 1 and its envelope."""
    capsys.readouterr()
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    # `ferry mcp` over stdio keeps stdout for JSON-RPC: its envelope ends its stderr.
    envelope = json.loads(captured.out or captured.err.strip().splitlines()[-1])
    assert code == (0 if envelope["ok"] else 1), (argv, code, envelope)
    if not envelope["ok"]:
        [finding] = envelope["findings"]
        assert finding["code"].startswith("X_") and finding["fix"], (argv, finding)
        event(finding["code"])
    return envelope  # type: ignore[no-any-return]


FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(argv=STORE_COMMANDS)
def test_any_store_command_line_is_a_refusal_or_a_success_and_a_refusal_changes_nothing(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    if any(w in ("-h", "--help") or w.startswith("--h") for w in argv):
        return  # help prints usage and exits 0: not a command
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{store}")
    monkeypatch.setenv("FERRY_APP", "cli_app")
    before = _digest(store)
    envelope = _run(argv, capsys)
    if not envelope["ok"]:
        assert _digest(store) == before, f"refused {argv} but changed the store"


@FUZZ
@given(argv=ROLE_COMMANDS)
def test_any_role_command_line_is_a_refusal_before_it_serves(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    if any(w in ("-h", "--help") or w.startswith("--h") for w in argv):
        return
    monkeypatch.setenv("DATABASE_URL", UNREACHABLE)
    monkeypatch.setenv("FERRY_APP", "cli_app")
    monkeypatch.setenv("FERRY_ADMIN_TOKEN_MANAGE", "fuzz-token")
    monkeypatch.setenv("FERRY_MCP_TOKEN", "fuzz-token")
    envelope = _run([*argv, "--database-url", UNREACHABLE], capsys)
    assert not envelope["ok"], "a role with an unreachable database cannot have served"


def test_after_the_fuzz_a_worker_completes_a_normal_run(store: Path) -> None:
    """Runs earlier fuzz examples queued (run-now, retry) and a new one all complete."""
    import cli_app  # type: ignore[import-not-found]

    async def work() -> str:
        driver = sqlite_job_driver(str(store), clock=FrozenClock())
        try:
            return await normal_run_state(driver, cli_app.greet, {"name": "after-the-fuzz"})
        finally:
            await driver.close()

    assert asyncio.run(work()) == "completed"
