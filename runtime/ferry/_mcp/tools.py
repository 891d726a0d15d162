"""The admin MCP tools: the dashboard's screens and actions for an MCP client.

Each tool calls the same ``ferry._operations`` function as the CLI command of the
same job and answers the CLI's ``--json`` envelope (``ok``, ``command``, ``summary``,
``findings``, ``data``) as the tool's structured result, so a script that reads
``ferry --json`` reads a tool result the same way. Every refusal is that envelope with
``ok: false`` and the ``X_*`` finding, marked as a tool error — a missing or weak token,
an argument of the wrong type (``X_INVARIANT`` naming it), a rule of the operations layer,
a database that went away — never the SDK's own error text.

Names follow the scheduled-tasks spec's two (``admin.x_job_tasks.list``,
``admin.action.job.task.run-now``): reads are ``admin.x_<screen>.<verb>``, actions are
``admin.action.job.<thing>.<verb>``. Reads need ``job:read``; actions need ``job:manage``.
Run ids are taken as strings or integers (a model passes either).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, StrictInt, StrictStr, ValidationError

import ferry._operations as operations
from ferry._bounds import run_id
from ferry._operations import bulk
from ferry._operations.access import Access, Level
from ferry._operations.envelope import Action, Outcome
from ferry._operations.filters import FILTER_WORDS, MAX_PAGE, page_limit
from ferry.drivers._url import connection_refusal
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError
from ferry.tasks._declaration import MAX_OCCURRENCES, TaskHandle

RunId = Annotated[StrictStr | StrictInt, Field(description="the run id, as a string or an integer")]
Limit = Annotated[
    StrictInt | StrictStr | None, Field(description=f"page size, 1 to {MAX_PAGE} (default 50)")
]
Job = Annotated[str | None, Field(description="the job name")]
State = Annotated[
    str | None, Field(description="queued, running, sleeping, completed, dead, cancelled, moving")
]
View = Annotated[
    str | None,
    Field(
        description="scheduled (queued, due later), retrying (queued after a failed attempt), "
        "sleeping, dead"
    ),
]
Since = Annotated[str | None, Field(description='created after: "1h" ago or ISO 8601')]
Until = Annotated[str | None, Field(description='created before: "10m" ago or ISO 8601')]
Key = Annotated[str | None, Field(description="idempotency keys starting with this")]
ErrorCode = Annotated[str | None, Field(description="the last error's X_* code")]
ErrorText = Annotated[
    str | None,
    Field(description="text the last error message contains (ASCII letters in either case)"),
]
InputPattern = Annotated[
    str | None,
    Field(description='JSON the input contains (jsonb @>), e.g. {"org_id": "42"}'),
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: the CLI command it answers for, who may call it, what it may change."""

    name: str
    command: str
    level: Level
    description: str
    destructive: bool = False
    """It deletes or ends something an operator cannot bring back as it was (cancel)."""
    idempotent: bool = False
    """Calling it twice changes nothing more than calling it once (pause, resume)."""

    @property
    def annotations(self) -> ToolAnnotations:
        if self.level == "read":
            return ToolAnnotations(
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            )
        return ToolAnnotations(
            read_only_hint=False,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=False,
        )


SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "admin.x_jobs.list",
        "jobs ls",
        "read",
        "Runs newest first, filtered and paged like `ferry jobs ls` (job:read).",
    ),
    ToolSpec(
        "admin.x_jobs.bulk-preview",
        "jobs bulk",
        "read",
        "How many runs a filter selects for a bulk retry, cancel or delete, some of their "
        "ids, and the selection token the bulk action tools need (job:read).",
    ),
    ToolSpec(
        "admin.x_jobs.show",
        "jobs show",
        "read",
        "One run: input, state, attempts, steps, error, lease (job:read).",
    ),
    ToolSpec(
        "admin.x_jobs.stats",
        "jobs stats",
        "read",
        "Per queue: depth, runs per state, throughput over a window (job:read).",
    ),
    ToolSpec(
        "admin.x_job_tasks.list",
        "tasks list",
        "read",
        "Every scheduled task with its next fire in its own zone, last fire and pause, like "
        "`ferry tasks list` (job:read).",
    ),
    ToolSpec(
        "admin.x_job_tasks.show",
        "tasks show",
        "read",
        "One task: its schedule in words and its next occurrences (job:read).",
    ),
    ToolSpec(
        "admin.x_workers.list",
        "workers ls",
        "read",
        "Every live worker process: host, pid, version, queues, concurrency, last "
        "heartbeat and the runs it holds, like `ferry workers ls` (job:read).",
    ),
    ToolSpec(
        "admin.action.job.retry",
        "jobs retry",
        "manage",
        "Put a dead or cancelled run back to queued with fresh attempts (job:manage).",
    ),
    ToolSpec(
        "admin.action.job.cancel",
        "jobs cancel",
        "manage",
        "Cancel a queued, sleeping or running run; it cannot be resumed, only retried "
        "from the start of its unrecorded steps (job:manage).",
        destructive=True,
    ),
    ToolSpec(
        "admin.action.job.bulk.retry",
        "jobs bulk retry",
        "manage",
        "Retry exactly the runs admin.x_jobs.bulk-preview selected for the same filter and "
        "answered the selection of (nothing when they changed: X_SELECTION_CHANGED) "
        "(job:manage).",
    ),
    ToolSpec(
        "admin.action.job.bulk.cancel",
        "jobs bulk cancel",
        "manage",
        "Cancel exactly the runs a bulk preview selected (job:manage).",
        destructive=True,
    ),
    ToolSpec(
        "admin.action.job.bulk.delete",
        "jobs bulk delete",
        "manage",
        "Delete exactly the runs a bulk preview selected, with their steps; they cannot be "
        "brought back (job:manage).",
        destructive=True,
    ),
    ToolSpec(
        "admin.action.job.queue.pause",
        "queues pause",
        "manage",
        "Stop claims from one queue; enqueues still land. A queue no run has named yet is "
        "refused (X_QUEUE_UNKNOWN) unless create is true (job:manage).",
        idempotent=True,
    ),
    ToolSpec(
        "admin.action.job.queue.resume",
        "queues resume",
        "manage",
        "Let claims from one queue proceed again (job:manage).",
        idempotent=True,
    ),
    ToolSpec(
        "admin.action.job.task.pause",
        "tasks pause",
        "manage",
        "Pause dispatching one scheduled task (job:manage).",
        idempotent=True,
    ),
    ToolSpec(
        "admin.action.job.task.resume",
        "tasks resume",
        "manage",
        "Resume dispatching one scheduled task (job:manage).",
        idempotent=True,
    ),
    ToolSpec(
        "admin.action.job.task.run-now",
        "tasks run-now",
        "manage",
        "Fire a task's entries now, with the jobs' plain keys (job:manage).",
        idempotent=True,
    ),
)
READ_TOOLS = tuple(spec.name for spec in SPECS if spec.level == "read")
MANAGE_TOOLS = tuple(spec.name for spec in SPECS if spec.level == "manage")


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


Tool = Callable[..., Awaitable[CallToolResult]]


def admin_tools(backend: Backend) -> MCPServer:
    """An MCP server carrying every admin tool over ``backend``."""
    server = EnvelopeServer(backend)
    tool = server.register
    d = backend.driver

    @tool("admin.x_jobs.list")
    async def jobs_list(
        queue: str | None = None,
        job: Job = None,
        state: State = None,
        view: View = None,
        tenant: str | None = None,
        since: Since = None,
        until: Until = None,
        key: Key = None,
        error_code: ErrorCode = None,
        error_text: ErrorText = None,
        input: InputPattern = None,
        before: Annotated[
            StrictStr | StrictInt | None, Field(description="page on: runs older than this id")
        ] = None,
        limit: Limit = None,
    ) -> CallToolResult:
        words = _words(locals())
        page = await operations.list_runs(d, words)
        return answer("jobs ls", page.summary, page.to_json())

    @tool("admin.x_jobs.bulk-preview")
    async def bulk_preview(
        action: Annotated[str, Field(description="retry, cancel or delete")],
        queue: str | None = None,
        job: Job = None,
        state: State = None,
        view: View = None,
        tenant: str | None = None,
        since: Since = None,
        until: Until = None,
        key: Key = None,
        error_code: ErrorCode = None,
        error_text: ErrorText = None,
        input: InputPattern = None,
    ) -> CallToolResult:
        chosen = bulk.bulk_action(action)
        selection = await bulk.preview(d, chosen, _words(locals()))
        return answer(f"jobs bulk {chosen}", selection.summary, selection.to_json())

    @tool("admin.x_jobs.show")
    async def jobs_show(id: RunId) -> CallToolResult:
        run = await operations.show_run(d, id)
        return answer("jobs show", operations.run_headline(run), operations.run_json(run))

    @tool("admin.x_jobs.stats")
    async def jobs_stats(
        window: Annotated[
            str,
            Field(description='throughput window, 1 ms to 366 days, e.g. "5m", "1h", "7d"'),
        ] = "5m",
    ) -> CallToolResult:
        window_ms = operations.stats_window_ms(window)
        queues = await operations.queue_stats(d, window_ms)
        data = operations.stats_json(window_ms, queues)
        return answer("jobs stats", operations.stats_summary(queues), data)

    @tool("admin.x_job_tasks.list")
    async def tasks_list() -> CallToolResult:
        rows = await operations.task_statuses(backend.tasks, d, now_ms=d.clock.now_ms())
        return answer("tasks list", f"{len(rows)} task(s)", rows)

    @tool("admin.x_job_tasks.show")
    async def tasks_show(
        name: str,
        count: Annotated[
            StrictInt, Field(description=f"how many next occurrences, 1 to {MAX_OCCURRENCES} (5)")
        ] = 5,
    ) -> CallToolResult:
        task = operations.find_task(backend.tasks, name)
        (row,) = await operations.task_statuses(
            [task], d, now_ms=d.clock.now_ms(), next_count=count
        )
        return answer("tasks show", f"task {task.name}", row)

    @tool("admin.x_workers.list")
    async def workers_list() -> CallToolResult:
        workers = await operations.list_workers(d)
        return answer(
            "workers ls", operations.workers_summary(workers), operations.workers_json(workers)
        )

    @tool("admin.action.job.retry")
    async def job_retry(id: RunId) -> CallToolResult:
        return acted("jobs retry", await operations.retry_run(d, id))

    @tool("admin.action.job.cancel")
    async def job_cancel(id: RunId) -> CallToolResult:
        return acted("jobs cancel", await operations.cancel_run(d, id))

    @tool("admin.action.job.queue.pause")
    async def queue_pause(
        queue: str,
        create: Annotated[
            bool, Field(description="pause it even though no run has named it yet")
        ] = False,
    ) -> CallToolResult:
        done = await operations.set_queue_paused(d, queue, paused=True, create=create)
        return acted("queues pause", done)

    @tool("admin.action.job.queue.resume")
    async def queue_resume(queue: str) -> CallToolResult:
        return acted("queues resume", await operations.set_queue_paused(d, queue, paused=False))

    for verb, paused in (("pause", True), ("resume", False)):
        _task_tool(tool, backend, verb, paused)
    for action in bulk.BULK_ACTIONS:
        _bulk_tool(tool, d, action)

    @tool("admin.action.job.task.run-now")
    async def task_run_now(name: str) -> CallToolResult:
        return acted("tasks run-now", await operations.run_task_now(backend.tasks, name))

    server.check_complete()
    return server


def _task_tool(
    tool: Callable[[str], Callable[[Tool], Tool]], backend: Backend, verb: str, paused: bool
) -> None:
    @tool(f"admin.action.job.task.{verb}")
    async def task_action(name: str) -> CallToolResult:
        done = await operations.set_task_paused(
            backend.tasks,
            backend.driver,
            name,
            paused=paused,
            now_ms=backend.driver.clock.now_ms(),
        )
        return acted(f"tasks {verb}", done)


def _bulk_tool(
    tool: Callable[[str], Callable[[Tool], Tool]], d: JobDriver, action: bulk.BulkAction
) -> None:
    @tool(f"admin.action.job.bulk.{action}")
    async def bulk_action(
        selection: Annotated[
            str, Field(description="the selection token admin.x_jobs.bulk-preview answered")
        ],
        queue: str | None = None,
        job: Job = None,
        state: State = None,
        view: View = None,
        tenant: str | None = None,
        since: Since = None,
        until: Until = None,
        key: Key = None,
        error_code: ErrorCode = None,
        error_text: ErrorText = None,
        input: InputPattern = None,
    ) -> CallToolResult:
        done = await bulk.apply(d, action, _words(locals()), selection)
        return acted(f"jobs bulk {action}", done)


def _words(given: dict[str, Any]) -> dict[str, str | None]:
    """A tool's filter arguments as the filter words (ids and sizes as text). A number is
    bounded before it becomes a word: ``str()`` of a huge int raises."""
    words = {w: None if given.get(w) is None else given[w] for w in FILTER_WORDS}
    if isinstance(words["limit"], int):
        words["limit"] = str(page_limit(words["limit"]))
    if isinstance(words["before"], int):
        words["before"] = run_id(words["before"], field="before")
    return {w: None if v is None else str(v) for w, v in words.items()}


class EnvelopeServer(MCPServer):
    """An ``MCPServer`` whose every tool call answers the envelope.

    A call is checked here, before the SDK validates its arguments: the caller's token
    (``X_UNAUTHENTICATED``) and its permission for the tool (``X_FORBIDDEN``). What the
    SDK and the tool body raise comes back to this method wrapped in its ``ToolError``; it
    is answered as the envelope of the tool's command: arguments that fail the input
    schema as ``X_INVARIANT`` naming each one, a ``FerryError`` as itself, a database
    that went away as the refusal the CLI gives for it. Anything else is a bug, and the
    SDK's generic error stands.
    """

    def __init__(self, backend: Backend) -> None:
        super().__init__(
            "ferry-admin",
            instructions=(
                "Operate ferry's durable jobs: list and inspect runs, retry or cancel them, "
                "pause queues, and list, pause, resume or fire scheduled tasks. Every result "
                "is the `ferry --json` envelope; a refusal carries an X_* code and a fix."
            ),
        )
        self._backend = backend
        self._specs = {spec.name: spec for spec in SPECS}
        self._registered: set[str] = set()

    def register(self, name: str) -> Callable[[Tool], Tool]:
        """Register the tool ``name`` of ``SPECS`` (its description and annotations)."""
        spec = self._specs[name]
        self._registered.add(name)
        return self.tool(
            name,
            description=spec.description,
            annotations=spec.annotations,
            structured_output=False,
        )

    def check_complete(self) -> None:
        """Every spec has its tool (a spec without one would be documented, not served)."""
        missing = set(self._specs) - self._registered
        assert not missing, f"tools declared but not registered: {sorted(missing)}"

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        spec = self._specs.get(name)
        if spec is None or context is None:
            return await super().call_tool(name, arguments, context)
        try:
            self._permit(spec, self._backend.level_of(context))
            return await super().call_tool(name, arguments, context)
        except FerryError as refused:
            return envelope(Outcome.refused(spec.command, refused))
        except ToolError as failed:
            refusal = self._refusal(spec, failed.__cause__)
            if refusal is None:
                raise
            return envelope(Outcome.refused(spec.command, refusal))

    @staticmethod
    def _permit(spec: ToolSpec, level: Level | None) -> None:
        if level is None:
            raise FerryError(
                "X_UNAUTHENTICATED",
                f"{spec.command}: no valid access token came with this call",
                "send a job:read or job:manage token: FERRY_MCP_TOKEN over stdio, "
                "`Authorization: Bearer <token>` over HTTP",
            )
        if spec.level == "manage" and level != "manage":
            raise FerryError(
                "X_FORBIDDEN",
                f"{spec.command}: this token lacks the job:manage permission",
                "use a job:manage token (FERRY_ADMIN_TOKEN_MANAGE) for actions",
            )

    def _refusal(self, spec: ToolSpec, cause: BaseException | None) -> FerryError | None:
        if isinstance(cause, FerryError):
            return cause
        if isinstance(cause, ValidationError):
            return _bad_arguments(spec, cause)
        if isinstance(cause, Exception):
            return connection_refusal(cause, self._backend.driver.location)
        return None


def _bad_arguments(spec: ToolSpec, error: ValidationError) -> FerryError:
    problems = "; ".join(
        f"{'.'.join(str(part) for part in issue['loc']) or 'arguments'}: {issue['msg']}"
        for issue in error.errors()[:5]
    )
    return FerryError(
        "X_INVARIANT",
        f"{spec.name}: {problems}",
        "pass each argument with the type the tool's input schema gives",
    )


def answer(command: str, summary: str, data: Any) -> CallToolResult:
    """A read's envelope as the tool's result."""
    return envelope(Outcome(command, summary, data))


def acted(command: str, done: Action) -> CallToolResult:
    """An action's envelope as the tool's result."""
    return envelope(Outcome(command, done.summary, done.data))


def envelope(outcome: Outcome) -> CallToolResult:
    """The envelope as structured content (and as its JSON text, for clients that show
    text), an error when it is a refusal."""
    structured: dict[str, Any] = json.loads(json.dumps(outcome.envelope(), default=str))
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(structured))],
        structured_content=structured,
        is_error=not outcome.ok,
    )
