"""The admin MCP tools: the dashboard's screens and actions for an MCP client.

Each tool calls the same ``ferry._operations`` function as the CLI command of the
same job and answers the CLI's ``--json`` envelope (``ok``, ``command``, ``summary``,
``findings``, ``data``) as the tool's structured result, so a script that reads
``ferry --json`` reads a tool result the same way. A refusal is that envelope with
``ok: false`` and the ``X_*`` finding, marked as a tool error.

Names follow the scheduled-tasks spec's two (``admin.x_job_tasks.list``,
``admin.action.job.task.run-now``): reads are ``admin.x_<screen>.<verb>``, actions are
``admin.action.job.<thing>.<verb>``. Reads need ``job:read``; actions need ``job:manage``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

import ferry._operations as operations
from ferry._operations.access import Access, Level
from ferry._operations.envelope import Outcome
from ferry._operations.filters import FILTER_WORDS, MAX_PAGE, page_limit
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError
from ferry.tasks._declaration import MAX_OCCURRENCES, TaskHandle

READ_TOOLS = (
    "admin.x_jobs.list",
    "admin.x_jobs.show",
    "admin.x_jobs.stats",
    "admin.x_job_tasks.list",
    "admin.x_job_tasks.show",
)
MANAGE_TOOLS = (
    "admin.action.job.retry",
    "admin.action.job.cancel",
    "admin.action.job.queue.pause",
    "admin.action.job.queue.resume",
    "admin.action.job.task.pause",
    "admin.action.job.task.resume",
    "admin.action.job.task.run-now",
)


@dataclass
class Backend:
    """What the tools read and act on, and who may call them.

    ``stdio_token`` is the token of a stdio session (from the environment); over HTTP each
    request carries its own bearer token instead.
    """

    driver: JobDriver
    access: Access
    tasks: Sequence[TaskHandle] = ()
    stdio_token: str | None = None

    def level_of(self, ctx: Context) -> Level | None:
        """The caller's level: the request's bearer token over HTTP, else the stdio one."""
        headers = ctx.headers
        if headers is not None:
            authorization = headers.get("authorization") or ""
            token = authorization[7:].strip() if authorization.lower().startswith("bearer ") else ""
        else:
            token = self.stdio_token or ""
        return self.access.level_of(token) if token else None


Body = Callable[[], Awaitable[Outcome]]
RunId = Annotated[str | int, Field(description="the run's id, as `jobs.list` gives it")]


def admin_tools(backend: Backend) -> MCPServer:
    """An MCP server carrying every admin tool over ``backend``."""
    server = MCPServer(
        "ferry-admin",
        instructions=(
            "Operate ferry's durable jobs: list and inspect runs, retry or cancel them, "
            "pause queues, and list, pause, resume or fire scheduled tasks. Every result is "
            "the `ferry --json` envelope; a refusal carries an X_* code and a fix."
        ),
    )
    guard = _Guard(backend)
    d = backend.driver

    @_tool(
        server,
        "admin.x_jobs.list",
        "read",
        "Runs newest first, filtered and paged like `ferry jobs ls` (job:read).",
    )
    async def jobs_list(
        ctx: Context,
        queue: str | None = None,
        job: Annotated[str | None, Field(description="the job name")] = None,
        state: Annotated[
            str | None, Field(description="queued, running, sleeping, completed, dead, cancelled")
        ] = None,
        tenant: str | None = None,
        since: Annotated[str | None, Field(description='created after: "1h" ago or ISO')] = None,
        until: Annotated[str | None, Field(description='created before: "10m" ago or ISO')] = None,
        before: Annotated[str | None, Field(description="page on: runs older than this id")] = None,
        limit: Annotated[int | None, Field(description=f"page size, 1 to {MAX_PAGE} (50)")] = None,
    ) -> CallToolResult:
        words = dict(
            zip(FILTER_WORDS, (queue, job, state, tenant, since, until, before), strict=False)
        )

        async def body() -> Outcome:
            # The number is bounded before it becomes a word: str() of a huge int raises.
            words["limit"] = None if limit is None else str(page_limit(limit))
            page = await operations.list_runs(d, words)
            return Outcome("jobs ls", f"{len(page.runs)} run(s)", page.to_json())

        return await guard(ctx, "read", "jobs ls", body)

    @_tool(
        server,
        "admin.x_jobs.show",
        "read",
        "One run: input, state, attempts, steps, error, lease (job:read).",
    )
    async def jobs_show(ctx: Context, id: RunId) -> CallToolResult:
        async def body() -> Outcome:
            run = await operations.show_run(d, id)
            return Outcome("jobs show", operations.run_headline(run), operations.run_json(run))

        return await guard(ctx, "read", "jobs show", body)

    @_tool(
        server,
        "admin.x_jobs.stats",
        "read",
        "Per queue: depth, runs per state, throughput over a window (job:read).",
    )
    async def jobs_stats(
        ctx: Context,
        window: Annotated[str, Field(description='throughput window, e.g. "5m", "1h"')] = "5m",
    ) -> CallToolResult:
        async def body() -> Outcome:
            window_ms = operations.stats_window_ms(window)
            queues = await operations.queue_stats(d, window_ms)
            data = operations.stats_json(window_ms, queues)
            return Outcome("jobs stats", f"{len(queues)} queue(s)", data)

        return await guard(ctx, "read", "jobs stats", body)

    @_tool(
        server,
        "admin.x_job_tasks.list",
        "read",
        "Every scheduled task with its next fire in its own zone, last fire and "
        "pause, like `ferry tasks list` (job:read).",
    )
    async def tasks_list(ctx: Context) -> CallToolResult:
        async def body() -> Outcome:
            rows = await operations.task_statuses(backend.tasks, d, now_ms=d.clock.now_ms())
            return Outcome("tasks list", f"{len(rows)} task(s)", rows)

        return await guard(ctx, "read", "tasks list", body)

    @_tool(
        server,
        "admin.x_job_tasks.show",
        "read",
        "One task: its schedule in words and its next occurrences (job:read).",
    )
    async def tasks_show(
        ctx: Context,
        name: str,
        count: Annotated[
            int, Field(description=f"how many next occurrences, 1 to {MAX_OCCURRENCES} (5)")
        ] = 5,
    ) -> CallToolResult:
        async def body() -> Outcome:
            task = operations.find_task(backend.tasks, name)
            (row,) = await operations.task_statuses(
                [task], d, now_ms=d.clock.now_ms(), next_count=count
            )
            return Outcome("tasks show", f"task {task.name}", row)

        return await guard(ctx, "read", "tasks show", body)

    @_tool(
        server,
        "admin.action.job.retry",
        "manage",
        "Put a dead or cancelled run back to queued (job:manage).",
    )
    async def job_retry(ctx: Context, id: RunId) -> CallToolResult:
        return await guard.act(ctx, "jobs retry", lambda: operations.retry_run(d, id))

    @_tool(
        server,
        "admin.action.job.cancel",
        "manage",
        "Cancel a queued, sleeping or running run (job:manage).",
    )
    async def job_cancel(ctx: Context, id: RunId) -> CallToolResult:
        return await guard.act(ctx, "jobs cancel", lambda: operations.cancel_run(d, id))

    for verb, paused in (("pause", True), ("resume", False)):
        _queue_tool(server, guard, d, verb, paused)
        _task_tool(server, guard, backend, verb, paused)

    @_tool(
        server,
        "admin.action.job.task.run-now",
        "manage",
        "Fire a task's entries now, with the jobs' plain keys (job:manage).",
    )
    async def task_run_now(ctx: Context, name: str) -> CallToolResult:
        return await guard.act(
            ctx, "tasks run-now", lambda: operations.run_task_now(backend.tasks, name)
        )

    return server


def _queue_tool(server: MCPServer, guard: _Guard, d: JobDriver, verb: str, paused: bool) -> None:
    @_tool(
        server,
        f"admin.action.job.queue.{verb}",
        "manage",
        f"{verb.capitalize()} claims from one queue (job:manage).",
    )
    async def queue_action(ctx: Context, queue: str) -> CallToolResult:
        return await guard.act(
            ctx, f"queues {verb}", lambda: operations.set_queue_paused(d, queue, paused=paused)
        )


def _task_tool(server: MCPServer, guard: _Guard, backend: Backend, verb: str, paused: bool) -> None:
    @_tool(
        server,
        f"admin.action.job.task.{verb}",
        "manage",
        f"{verb.capitalize()} dispatching one scheduled task (job:manage).",
    )
    async def task_action(ctx: Context, name: str) -> CallToolResult:
        async def act() -> operations.Action:
            return await operations.set_task_paused(
                backend.tasks,
                backend.driver,
                name,
                paused=paused,
                now_ms=backend.driver.clock.now_ms(),
            )

        return await guard.act(ctx, f"tasks {verb}", act)


_ANNOTATIONS: dict[Level, ToolAnnotations] = {
    "read": ToolAnnotations(read_only_hint=True, open_world_hint=False),
    "manage": ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
}


def _tool(
    server: MCPServer, name: str, level: Level, description: str
) -> Callable[[Callable[..., Awaitable[CallToolResult]]], Callable[..., Awaitable[CallToolResult]]]:
    """Register a tool whose body answers its own ``CallToolResult`` (the envelope)."""
    return server.tool(
        name, description=description, annotations=_ANNOTATIONS[level], structured_output=False
    )


class _Guard:
    """Checks the caller's permission, runs a tool body, answers the envelope."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    async def __call__(
        self, ctx: Context, needs: Level, command: str, body: Body
    ) -> CallToolResult:
        level = self._backend.level_of(ctx)
        permission = "job:read" if needs == "read" else "job:manage"
        try:
            if level is None:
                raise FerryError(
                    "X_UNAUTHENTICATED",
                    f"{command}: no valid access token came with this call",
                    "send a job:read or job:manage token: FERRY_MCP_TOKEN over stdio, "
                    "`Authorization: Bearer <token>` over HTTP",
                )
            if needs == "manage" and level != "manage":
                raise FerryError(
                    "X_FORBIDDEN",
                    f"{command}: this token lacks the {permission} permission",
                    "use a job:manage token (FERRY_ADMIN_TOKEN_MANAGE) for actions",
                )
            outcome = await body()
        except FerryError as refused:
            outcome = Outcome.refused(command, refused)
        return _result(outcome)

    async def act(
        self, ctx: Context, command: str, act: Callable[[], Awaitable[operations.Action]]
    ) -> CallToolResult:
        async def body() -> Outcome:
            done = await act()
            return Outcome(command, done.summary, done.data)

        return await self(ctx, "manage", command, body)


def _result(outcome: Outcome) -> CallToolResult:
    envelope: dict[str, Any] = json.loads(json.dumps(outcome.envelope(), default=str))
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(envelope))],
        structured_content=envelope,
        is_error=not outcome.ok,
    )
