"""One JSON contract, documented field by field: every command's ``--json`` data and every
MCP tool's result carry exactly the fields ``docs/cli.md`` and ``docs/mcp.md`` list.

The docs mark each shape with ``<!-- data: <shape> -->`` above a table whose first column
holds field paths (``runs[].lastError.code``; several in one cell share its type and
meaning); a field typed ``stored JSON`` or ``object of …`` is opaque (its inside is the
application's, or keyed by data), and the test does not descend into it. Each command runs
as a real process on a schema seeded so that every list it answers is non-empty; each MCP
tool is called through the SDK's client. The paths it printed must be the documented ones
— no more, no fewer — so the docs cannot drift from what a script reads.
"""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from support.processes import REPO

from ferry import _fleet
from ferry._clock import FrozenClock
from ferry._mcp.tools import SPECS
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.drivers.protocol import EnqueueRequest, RunFilter

from .conftest import Ferry, cli_env

DOCS = (REPO / "docs" / "cli.md", REPO / "docs" / "mcp.md")
_MARKER = re.compile(r"<!-- data: (?P<shape>[^>]+?) -->\n+(?P<table>(?:\|.*\n)+)")
_PATH = re.compile(r"`([^`]+)`")
_OPAQUE = ("stored JSON", "object of")

READ_TOKEN, MANAGE_TOKEN = "contract-read", "contract-manage"


@dataclass(frozen=True)
class Documented:
    paths: frozenset[str]
    opaque: frozenset[str]


def documented() -> dict[str, Documented]:
    """Every documented shape: its field paths, and which of them are opaque."""
    shapes: dict[str, Documented] = {}
    for doc in DOCS:
        for found in _MARKER.finditer(doc.read_text(encoding="utf-8")):
            rows = [line.split("|")[1:-1] for line in found["table"].splitlines()[2:]]
            fields = {path: cells[1].strip() for cells in rows for path in _PATH.findall(cells[0])}
            opaque = {path for path, kind in fields.items() if kind.startswith(_OPAQUE)}
            shape = found["shape"].strip()
            assert shape not in shapes, f"{shape} is documented twice"
            shapes[shape] = Documented(frozenset(fields), frozenset(opaque))
    return shapes


def paths(value: Any, opaque: frozenset[str], prefix: str = "") -> Iterator[str]:
    """Every field path of ``value`` (``a``, ``a.b``, ``a[].b``), not into opaque ones; a
    list is the field that holds it, its items' fields are ``a[].…`` (a list of plain
    values, ids or names, has none)."""
    if prefix and prefix in opaque:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from paths(item, opaque, path)
    elif isinstance(value, list):
        for item in value:
            yield from paths(item, opaque, f"{prefix}[]")


def check(shape: str, data: Any, shapes: dict[str, Documented]) -> None:
    """``data`` (one value, or a list of samples of one shape) has the documented fields."""
    assert shape in shapes, f"{shape}: no `<!-- data: {shape} -->` table in docs/cli.md"
    doc = shapes[shape]
    samples = data if shape == "envelope" else [data]
    seen = {path for sample in samples for path in paths(sample, doc.opaque)}
    assert seen - doc.paths == set(), f"{shape}: undocumented fields {sorted(seen - doc.paths)}"
    assert doc.paths - seen == set(), f"{shape}: documented, never seen {sorted(doc.paths - seen)}"


@pytest.fixture
async def contract(
    seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> AsyncIterator[dict[str, str]]:
    """The seeded schema, with a live worker's presence, a run scheduled later, and a
    second schema a drain moves into and finds a colliding key in; yields run ids."""
    dead = (await seeded.introspect.list_runs(RunFilter(state="dead")))[0].id
    clock = FrozenClock()
    await seeded.heartbeat_many(
        [],
        record=_fleet.presence_record(
            worker_id="host:1:abc",
            queues=["default"],
            concurrency=4,
            started_at_ms=clock.now_ms(),
            now_ms=_now_ms(),
            runs=[dead],
            interval_ms=3_600_000,
        ),
    )
    target = postgres_job_driver(postgres_dsn, schema=f"{pg_schema}_to")
    await target.open()
    other = EnqueueRequest("cli.greet", "later", {"name": "other"}, "greet:cyd", 2)
    await target.enqueue(other)
    yield {"dead": dead, "target_schema": target.schema}
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{target.schema}" CASCADE')
    finally:
        await connection.close()
    await target.close()


def _now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


async def test_every_commands_json_is_exactly_its_documented_fields(
    ferry: Ferry, contract: dict[str, str], postgres_dsn: str, pg_schema: str
) -> None:
    shapes = documented()

    envelopes: list[dict[str, Any]] = []

    def ran(shape: str, *args: str, ok: bool = True) -> None:
        done = ferry(*args, "--json")
        envelope = done.envelope
        assert envelope["ok"] is ok, (args, done.stdout, done.stderr)
        envelopes.append(envelope)
        check(shape, envelope["data"], shapes)

    dead = contract["dead"]
    ran("jobs ls", "jobs", "ls")
    ran("jobs show", "jobs", "show", dead)
    ran("jobs stats", "jobs", "stats")
    ran("jobs enqueue", "jobs", "enqueue", "cli.greet", "--input", '{"name": "eve"}')
    ran("jobs bulk --dry-run", "jobs", "bulk", "delete", "--job", "cli.greet", "--dry-run")
    ran("workers ls", "workers", "ls")
    ran("tasks list", "tasks", "list")
    ran("tasks show", "tasks", "show", "cli.nightly")
    ran("tasks pause", "tasks", "pause", "cli.nightly")
    ran("tasks pause", "tasks", "resume", "cli.nightly")
    ran("tasks run", "tasks", "run", "cli.nightly")
    ran("queues pause", "queues", "pause", "later")
    ran("queues pause", "queues", "resume", "later")
    ran("doctor", "doctor")
    ran("prune", "prune", "--retain-completed", "forever", "--retain-dead", "forever")
    ran("migrate", "migrate")
    ran("jobs retry", "jobs", "retry", dead)
    ran("jobs cancel", "jobs", "cancel", dead)
    ran("jobs bulk", "jobs", "bulk", "retry", "--state", "cancelled", "--yes")
    target = contract["target_schema"]
    ran("jobs drain", "jobs", "drain", "--to", postgres_dsn, "--to-schema", target, ok=False)
    check("envelope", envelopes, shapes)  # ok ones and a refusal


def _stdio(dsn: str, schema: str) -> Client:
    env = {
        **cli_env(dsn, schema),
        "FERRY_ADMIN_TOKEN_READ": READ_TOKEN,
        "FERRY_ADMIN_TOKEN_MANAGE": MANAGE_TOKEN,
        "FERRY_MCP_TOKEN": MANAGE_TOKEN,
    }
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "ferry", "mcp", "--transport", "stdio"],
            env=env,
            cwd=REPO,
        )
    )


MCP_SHAPES = {
    "admin.x_jobs.list": "jobs ls",
    "admin.x_jobs.show": "jobs show",
    "admin.x_jobs.stats": "jobs stats",
    "admin.x_jobs.bulk-preview": "jobs bulk --dry-run",
    "admin.x_workers.list": "workers ls",
    "admin.x_job_tasks.list": "tasks list",
    "admin.x_job_tasks.show": "tasks show",
    "admin.action.job.retry": "jobs retry",
    "admin.action.job.cancel": "jobs cancel",
    "admin.action.job.queue.pause": "queues pause",
    "admin.action.job.queue.resume": "queues pause",
    "admin.action.job.task.pause": "tasks pause",
    "admin.action.job.task.resume": "tasks pause",
    "admin.action.job.task.run-now": "tasks run",
    "admin.action.job.bulk.retry": "jobs bulk",
    "admin.action.job.bulk.cancel": "jobs bulk",
    "admin.action.job.bulk.delete": "jobs bulk",
}
"""Which documented shape each tool answers (the CLI command's, or docs/mcp.md's own)."""


async def test_every_mcp_tools_result_is_exactly_its_documented_fields(
    contract: dict[str, str], postgres_dsn: str, pg_schema: str
) -> None:
    shapes = documented()
    assert set(MCP_SHAPES) == {spec.name for spec in SPECS}, "a tool without a shape here"
    mcp_doc = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    for spec in SPECS:
        assert f"`{spec.name}`" in mcp_doc, f"docs/mcp.md does not list {spec.name}"
    dead = contract["dead"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("admin.x_jobs.list", {"limit": 10}),
        ("admin.x_jobs.show", {"id": int(dead)}),
        ("admin.x_jobs.stats", {}),
        ("admin.x_jobs.bulk-preview", {"action": "retry", "state": "dead"}),
        ("admin.x_workers.list", {}),
        ("admin.x_job_tasks.list", {}),
        ("admin.x_job_tasks.show", {"name": "cli.nightly", "count": 2}),
        ("admin.action.job.queue.pause", {"queue": "later"}),
        ("admin.action.job.queue.resume", {"queue": "later"}),
        ("admin.action.job.task.pause", {"name": "cli.nightly"}),
        ("admin.action.job.task.resume", {"name": "cli.nightly"}),
        ("admin.action.job.task.run-now", {"name": "cli.nightly"}),
        ("admin.action.job.retry", {"id": dead}),
        ("admin.action.job.cancel", {"id": dead}),
    ]
    envelopes: list[dict[str, Any]] = []
    async with _stdio(postgres_dsn, pg_schema) as client:
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            envelope = result.structured_content
            assert envelope is not None and envelope["ok"], (tool, envelope)
            envelopes.append(envelope)
            check(MCP_SHAPES[tool], envelope["data"], shapes)
        refused = await client.call_tool("admin.x_jobs.show", {"id": "424242"})
        assert refused.structured_content is not None
        envelopes.append(refused.structured_content)
        check("envelope", envelopes, shapes)
        for action, words in (
            ("retry", {"state": "cancelled"}),
            ("cancel", {"queue": "later"}),
            ("delete", {"state": "cancelled"}),
        ):
            preview = await client.call_tool(
                "admin.x_jobs.bulk-preview", {"action": action, **words}
            )
            assert preview.structured_content is not None
            selection = preview.structured_content["data"]["selection"]
            result = await client.call_tool(
                f"admin.action.job.bulk.{action}", {"selection": selection, **words}
            )
            assert result.structured_content is not None
            assert result.structured_content["ok"], result.structured_content
            check(
                MCP_SHAPES[f"admin.action.job.bulk.{action}"],
                result.structured_content["data"],
                shapes,
            )


def test_the_docs_mark_no_shape_no_test_reads() -> None:
    """Every documented shape is one a test above checks (a table no test reads would be a
    field list nothing keeps true)."""
    checked = set(MCP_SHAPES.values()) | {
        "envelope", "jobs enqueue", "jobs drain", "doctor", "prune", "migrate",
    }  # fmt: skip
    assert set(documented()) == checked
