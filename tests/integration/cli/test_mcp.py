"""``ferry mcp`` as a real process, driven by the official MCP SDK's client, on real Postgres.

Every read tool must answer exactly what ``ferry --json`` prints for the same command (the
shared operations module is the one source; these tests catch a drift), every action must
land in the database, and the tokens and scopes must hold over stdio and over HTTP.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

import httpx
import httpx2
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from support.processes import REPO, Fleet, free_port
from support.waiting import eventually

from ferry._mcp import MANAGE_TOOLS, READ_TOOLS
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import RunFilter

from .conftest import Ferry, cli_env

READ_TOKEN = "mcp-read-token"
MANAGE_TOKEN = "mcp-manage-token"
SPEC_NAMES = {"admin.x_job_tasks.list", "admin.action.job.task.run-now"}


def _env(dsn: str, schema: str, **extra: str) -> dict[str, str]:
    return {
        **cli_env(dsn, schema),
        "FERRY_ADMIN_TOKEN_READ": READ_TOKEN,
        "FERRY_ADMIN_TOKEN_MANAGE": MANAGE_TOKEN,
        **extra,
    }


def _stdio(dsn: str, schema: str, token: str, **options: Any) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ferry", "mcp", "--transport", "stdio"],
        env=_env(dsn, schema, FERRY_MCP_TOKEN=token),
        cwd=REPO,
    )
    return Client(params, **options)


async def _call(client: Client, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """A tool's envelope and whether the client saw it as an error."""
    result = await client.call_tool(tool, arguments)
    assert result.structured_content is not None, result
    return bool(result.is_error), result.structured_content


async def _dead_run(driver: PostgresJobDriver) -> str:
    [run] = await driver.introspect.list_runs(RunFilter(state="dead"))
    return run.id


async def test_every_read_tool_answers_exactly_what_the_cli_prints(
    seeded: PostgresJobDriver, ferry: Ferry, postgres_dsn: str, pg_schema: str, cli_app: ModuleType
) -> None:
    dead = await _dead_run(seeded)
    parent = await cli_app.seed_roll_call(seeded, seeded.clock)  # a result and two children
    async with _stdio(postgres_dsn, pg_schema, READ_TOKEN) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {*READ_TOOLS, *MANAGE_TOOLS} and tools >= SPEC_NAMES
        huge, task = "99999999999999999999999", "cli.nightly"
        cases = [
            ("admin.x_jobs.list", {}, "jobs ls"),
            ("admin.x_jobs.list", {"state": "dead", "limit": 5}, "jobs ls --state dead --limit 5"),
            ("admin.x_jobs.show", {"id": dead}, f"jobs show {dead}"),
            ("admin.x_jobs.show", {"id": parent}, f"jobs show {parent}"),
            ("admin.x_jobs.stats", {"window": "1h"}, "jobs stats --window 1h"),
            ("admin.x_job_tasks.list", {}, "tasks list"),
            ("admin.x_job_tasks.show", {"name": task, "count": 3}, f"tasks show {task} --count 3"),
            ("admin.x_jobs.list", {"before": huge}, f"jobs ls --before {huge}"),
            ("admin.x_jobs.show", {"id": "424242"}, "jobs show 424242"),
        ]  # fmt: skip
        for tool, arguments, command in cases:
            is_error, envelope = await _call(client, tool, **arguments)
            printed = ferry(*command.split(), "--json").envelope
            assert envelope == printed, (tool, arguments)
            assert is_error is (not printed["ok"])


async def test_the_actions_land_in_the_database_with_a_manage_token_over_stdio(
    seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> None:
    dead = await _dead_run(seeded)
    async with _stdio(postgres_dsn, pg_schema, MANAGE_TOKEN) as client:
        is_error, retried = await _call(client, "admin.action.job.retry", id=dead)
        assert not is_error and retried["data"] == {"id": dead, "state": "queued"}
        again_error, again = await _call(client, "admin.action.job.retry", id=dead)
        assert again_error and again["findings"][0]["code"] == "X_RUN_STATE"
        _, cancelled = await _call(client, "admin.action.job.cancel", id=dead)
        assert cancelled["data"]["state"] == "cancelled"

        await _call(client, "admin.action.job.queue.pause", queue="later")
        [later] = [q for q in await seeded.stats() if q.queue == "later"]
        assert later.paused
        await _call(client, "admin.action.job.queue.resume", queue="later")
        empty_error, empty = await _call(client, "admin.action.job.queue.pause", queue="")
        assert empty_error and empty["findings"][0]["code"] == "X_INVARIANT"

        _, paused = await _call(client, "admin.action.job.task.pause", name="cli.nightly")
        assert paused["data"] == {"name": "cli.nightly", "paused": True}
        _, listed = await _call(client, "admin.x_job_tasks.list")
        assert listed["data"][0]["paused"] is True
        await _call(client, "admin.action.job.task.resume", name="cli.nightly")
        _, fired = await _call(client, "admin.action.job.task.run-now", name="cli.nightly")
        [entry] = fired["data"]["runs"]
        assert entry["job"] == "cli.greet" and entry["deduplicated"] is False
        run = await seeded.introspect.get_run(entry["jobId"])
        assert run is not None and run.summary.state == "queued"
        unknown_error, unknown = await _call(client, "admin.action.job.task.run-now", name="nope")
        assert unknown_error and unknown["findings"][0]["code"] == "X_TASK_UNKNOWN"


async def test_a_read_token_reads_but_every_action_is_refused_x_forbidden(
    seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> None:
    dead = await _dead_run(seeded)
    async with _stdio(postgres_dsn, pg_schema, READ_TOKEN) as client:
        is_error, _ = await _call(client, "admin.x_jobs.list")
        assert not is_error
        arguments = {"id": dead, "queue": "later", "name": "cli.nightly"}
        for tool in MANAGE_TOOLS:
            schema = next(t for t in (await client.list_tools()).tools if t.name == tool)
            wanted = {k: v for k, v in arguments.items() if k in schema.input_schema["properties"]}
            refused, envelope = await _call(client, tool, **wanted)
            assert refused and envelope["findings"][0]["code"] == "X_FORBIDDEN", tool
    run = await seeded.introspect.get_run(dead)
    assert run is not None and run.summary.state == "dead", "nothing was retried"


async def test_stdio_refuses_to_start_without_a_token_and_an_unknown_token_reads_nothing(
    seeded: PostgresJobDriver, ferry: Ferry, postgres_dsn: str, pg_schema: str
) -> None:
    """stdout is the JSON-RPC channel: the refusal goes to stderr (as its envelope under
    ``--json``), and a client that started the server sees it end, not a line it cannot
    parse."""
    started = ferry("mcp", env=_env(postgres_dsn, pg_schema))
    assert (started.code, started.stdout) == (1, "") and "Traceback" not in started.stderr
    assert started.stderr.startswith("X_UNAUTHENTICATED: `ferry mcp` over stdio was started")
    as_json = ferry("mcp", "--json", env=_env(postgres_dsn, pg_schema))
    assert (as_json.code, as_json.stdout) == (1, "")
    assert json.loads(as_json.stderr)["findings"][0]["code"] == "X_UNAUTHENTICATED"
    unparsed: list[Exception] = []

    async def collect(message: Any) -> None:
        if isinstance(message, Exception):  # a line on stdout that was not JSON-RPC
            unparsed.append(message)

    with pytest.raises(ExceptionGroup) as ended:
        async with _stdio(postgres_dsn, pg_schema, "", message_handler=collect):
            pass
    assert unparsed == [], unparsed
    assert ended.group_contains(MCPError, match="Connection closed")
    async with _stdio(postgres_dsn, pg_schema, "not-a-token") as client:
        refused, envelope = await _call(client, "admin.x_job_tasks.list")
        assert refused and envelope["findings"][0]["code"] == "X_UNAUTHENTICATED"


@pytest.fixture
async def http_server(
    seeded: PostgresJobDriver, fleet: Fleet, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[str]:
    """``ferry mcp --transport http`` as a real process; yields its endpoint URL."""
    port = free_port()
    mcp = await fleet.start(
        *("mcp", "--transport", "http", "--port", str(port)),
        name="mcp",
        env=_env(postgres_dsn, pg_schema),
    )
    url = f"http://127.0.0.1:{port}/mcp"

    async def answering() -> bool:
        if not mcp.running:
            raise AssertionError(f"ferry mcp exited early:\n{mcp.log()}")
        with contextlib.suppress(httpx.HTTPError):
            async with httpx.AsyncClient() as probe:
                return (await probe.post(url)).status_code == 401
        return False

    await eventually(answering, within_s=60, what="ferry mcp to answer on its port")
    yield url
    mcp.send(signal.SIGTERM)
    await mcp.wait()


def _http(url: str, token: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


async def test_over_http_a_bearer_token_is_required_and_scopes_hold(
    http_server: str, seeded: PostgresJobDriver, ferry: Ferry
) -> None:
    dead = await _dead_run(seeded)
    async with _http(http_server, READ_TOKEN) as reader:
        _, tasks = await _call(reader, "admin.x_job_tasks.list")
        assert tasks == ferry("tasks", "list", "--json").envelope
        refused, envelope = await _call(reader, "admin.action.job.retry", id=dead)
        assert refused and envelope["findings"][0]["code"] == "X_FORBIDDEN"
    async with _http(http_server, MANAGE_TOKEN) as manager:
        is_error, retried = await _call(manager, "admin.action.job.retry", id=dead)
        assert not is_error and retried["data"]["state"] == "queued"
    # Wrong tokens last: each counts against this address, and past five in a window the
    # address is throttled (test_dashboard_proxy covers the 429), the right token too.
    async with httpx.AsyncClient() as anonymous:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            answer = await anonymous.post(http_server, json={}, headers=headers)
            assert answer.status_code == 401 and answer.json()["code"] == "X_UNAUTHENTICATED"
    with pytest.raises(Exception):  # noqa: B017 (the SDK's own error for a refused connect)
        async with _http(http_server, "wrong") as client:
            await client.list_tools()


async def test_a_model_gets_ids_as_numbers_honest_hints_and_every_refusal_in_the_envelope(
    seeded: PostgresJobDriver, ferry: Ferry, postgres_dsn: str, pg_schema: str
) -> None:
    dead = await _dead_run(seeded)
    async with _stdio(postgres_dsn, pg_schema, MANAGE_TOKEN) as client:
        hints = {t.name: t.annotations for t in (await client.list_tools()).tools}
        for name in READ_TOOLS:
            assert hints[name].read_only_hint is True and not hints[name].destructive_hint
        destructive = {name for name in MANAGE_TOOLS if hints[name].destructive_hint}
        assert destructive == {
            "admin.action.job.cancel",
            "admin.action.job.bulk.cancel",
            "admin.action.job.bulk.delete",
        }
        assert not any(hints[name].read_only_hint for name in MANAGE_TOOLS)

        # An integer id is the same run as its string.
        _, by_number = await _call(client, "admin.x_jobs.show", id=int(dead))
        _, by_text = await _call(client, "admin.x_jobs.show", id=dead)
        assert by_number == by_text and by_number["ok"]
        summary = by_number["data"]["summary"]
        assert summary["createdAt"].endswith("Z") and summary["createdAtMs"] > 0

        # Arguments the schema refuses, and bounds the operations refuse: each an envelope.
        for tool, arguments, named in [
            ("admin.x_jobs.show", {"id": 1.5}, "id"),
            ("admin.x_jobs.list", {"limit": 10_000}, "limit"),
            ("admin.x_jobs.list", {"limit": [1]}, "limit"),
            ("admin.x_jobs.stats", {"window": "400d"}, "window"),
            ("admin.x_job_tasks.show", {"name": "cli.nightly", "count": 10**9}, "count"),
            ("admin.action.job.queue.pause", {"queue": "latre"}, "latre"),
        ]:
            refused, envelope = await _call(client, tool, **arguments)
            assert refused and envelope["ok"] is False and envelope["data"] is None, envelope
            [finding] = envelope["findings"]
            assert finding["code"] in {"X_INVARIANT", "X_OUT_OF_RANGE", "X_QUEUE_UNKNOWN"}, finding
            assert named in finding["message"] and finding["fix"], finding
        _, created = await _call(client, "admin.action.job.queue.pause", queue="new", create=True)
        assert created["data"] == {"queue": "new", "paused": True}
