"""``task(...)``: a cron trigger that enqueues jobs, and the handle it returns.

A task never does work itself: its ``enqueue`` field builds ``[(job, input), ...]`` for an
occurrence and the jobs do the work, with their own retries and idempotency keys. The
entries are built for the occurrence, never for "now", because a catch-up dispatch runs
long after the instant it fires for.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ferry._bounds import bounded_int
from ferry._checks import require_count
from ferry._jobs.declaration import JobHandle
from ferry._jobs.facade import build_request, current_job_driver, enqueue
from ferry._names import check_name
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES
from ferry.drivers.protocol import EnqueueRequest
from ferry.errors import FerryError
from ferry.tasks._cron import describe_cron, parse_cron
from ferry.tasks._occurrences import next_occurrences, validate_zone

CatchUp = Literal["skip", "run-once", "run-all"]
Entry = tuple[JobHandle[Any, Any], Any]
EnqueueFn = Callable[[int], Sequence[Entry]]

CATCH_UP_POLICIES: tuple[CatchUp, ...] = ("skip", "run-once", "run-all")
_anonymous_tasks = itertools.count(1)
MAX_OCCURRENCES = 100
"""The most next occurrences one call lists (``tasks show --count``, the MCP ``count``):
each is computed, so the count is what bounds the work a read-only caller can ask for."""
_declared: list[TaskHandle] = []


class TaskHandle:
    """A declared schedule. Read its entries, fire it by hand; the scheduler fires it on time."""

    kind: Literal["task"] = "task"

    def __init__(
        self,
        *,
        cron: str,
        tz: str,
        enqueue: EnqueueFn,
        catch_up: CatchUp,
        max_catch_up: int,
        name: str | None,
    ) -> None:
        self._explicit_name = name is not None
        self.name = name if name is not None else f"anonymous-task-{next(_anonymous_tasks)}"
        owner = f'task "{self.name}"'
        self.cron = cron
        self.cron_expression = parse_cron(cron, owner=owner)
        self.tz = tz
        self.zone = validate_zone(tz, owner=owner)
        self._enqueue = enqueue
        self.catch_up: CatchUp = catch_up
        self.max_catch_up = max_catch_up

    def stamp_name(self, export: str) -> None:
        """Take the export name ``define_api`` found, unless ``name=`` was given."""
        if not self._explicit_name:
            self.name = export

    def entries(self, occurrence_ms: int | None = None) -> list[Entry]:
        """The ``(job, input)`` pairs this task fires for ``occurrence_ms`` (default: now)."""
        if occurrence_ms is None:
            occurrence_ms = _now_ms()
        produced = self._enqueue(occurrence_ms)
        entries: list[Entry] = []
        for index, entry in enumerate(produced):
            if not (isinstance(entry, tuple) and len(entry) == 2):
                raise FerryError(
                    "X_INVARIANT",
                    f'task "{self.name}" entry {index} is {entry!r}, not a (job, input) pair',
                    "return a list of (job_handle, input) tuples from enqueue=",
                )
            if not isinstance(entry[0], JobHandle):
                raise FerryError(
                    "X_IDEMPOTENCY_REQUIRED",
                    f'task "{self.name}" entry {index} enqueues {entry[0]!r}, which is not a '
                    "job declared with an idempotency key — a double fire would duplicate work",
                    "declare the work with @job(..., idempotency_key=...) and put that handle "
                    "in the entry",
                )
            entries.append((entry[0], entry[1]))
        return entries

    async def enqueue(self, *, queue: str | None = None) -> list[dict[str, Any]]:
        """Fire the entries now, with each job's plain key; one ``{job, result}`` per entry."""
        fired: list[dict[str, Any]] = []
        for handle, value in self.entries():
            result = await enqueue(
                handle.definition,
                value,
                queue=handle.queue if queue is None else queue,
                actor=handle.actor,
            )
            fired.append({"job": handle.name, "result": result})
        return fired

    def dispatch_requests(
        self, occurrence_ms: int, *, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES
    ) -> list[EnqueueRequest]:
        """The rows a scheduled tick writes, each on its handle's queue: keys scoped
        ``<task>:<occurrenceMs>:<job key>``, so a second scheduler or a retried tick cannot
        fire one occurrence twice."""
        return [
            build_request(
                handle.definition,
                value,
                queue=handle.queue,
                actor=handle.actor,
                key_prefix=f"{self.name}:{occurrence_ms}",
                max_payload_bytes=max_payload_bytes,
            )
            for handle, value in self.entries(occurrence_ms)
        ]

    def describe(self) -> dict[str, Any]:
        """The manifest row; ``jobs`` in declaration order (entries are a sequence)."""
        return {
            "kind": "task",
            "name": self.name,
            "cron": self.cron,
            "tz": self.tz,
            "catchUp": self.catch_up,
            "maxCatchUp": self.max_catch_up,
            "jobs": [handle.name for handle, _ in self.entries()],
        }

    def describe_schedule(self) -> str:
        """The cron in words."""
        return describe_cron(self.cron)

    def next_occurrences(self, count: int = 5, after_ms: int | None = None) -> list[int]:
        """The next ``count`` fire instants (epoch ms) after ``after_ms`` (default: now);
        ``count`` is 1 to ``MAX_OCCURRENCES`` (each instant is computed)."""
        bounded_int(
            count,
            field="count",
            low=1,
            high=MAX_OCCURRENCES,
            fix=f"ask for 1 to {MAX_OCCURRENCES} next occurrences (default 5)",
        )
        return next_occurrences(
            self.cron, self.tz, after_ms if after_ms is not None else _now_ms(), count
        )

    def __repr__(self) -> str:
        return f"<task {self.name!r} cron={self.cron!r} tz={self.tz!r}>"


def task(
    *,
    cron: str,
    tz: str,
    enqueue: EnqueueFn,
    catch_up: CatchUp = "skip",
    max_catch_up: int = 10,
    name: str | None = None,
) -> TaskHandle:
    """Declare a schedule. ``tz`` is required and must be an IANA zone: a schedule without
    one moves when a container's TZ changes."""
    if name is not None:
        check_name(name, what="task name")
    if catch_up not in CATCH_UP_POLICIES:
        raise FerryError(
            "X_INVARIANT",
            f"task catch_up {catch_up!r} is not a policy",
            'use catch_up="skip" (default), "run-once" or "run-all"',
        )
    require_count(
        max_catch_up,
        what="task max_catch_up {}",
        fix="leave it at 10, or give how many missed occurrences one round may fire",
    )
    if not callable(enqueue):
        raise FerryError(
            "X_INVARIANT",
            f"task enqueue {enqueue!r} is not a function of the occurrence",
            "pass enqueue=lambda occurrence_ms: [(some_job, {...})]",
        )
    handle = TaskHandle(
        cron=cron,
        tz=tz,
        enqueue=enqueue,
        catch_up=catch_up,
        max_catch_up=max_catch_up,
        name=name,
    )
    # Build the first occurrence's entries now, so a bad entry is refused at declaration
    # rather than at a 3 a.m. tick.
    handle.entries(handle.next_occurrences(1, _now_ms())[0])
    _declared.append(handle)
    return handle


def declared_tasks() -> list[TaskHandle]:
    """Every task declared in this process, in declaration order."""
    return list(_declared)


def _now_ms() -> int:
    """Now on the configured driver's clock, or the wall clock when none is set."""
    try:
        return current_job_driver().clock.now_ms()
    except FerryError:
        from ferry._clock import SystemClock

        return SystemClock().now_ms()
