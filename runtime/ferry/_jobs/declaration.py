"""``@job(...)``: a declared job and the handle every projection of it hangs off."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypeVar, overload

from pydantic import BaseModel

from ferry._duration import Duration, to_ms
from ferry._jobs.dedupe import DedupeSetting, dedupe_rule, described
from ferry._jobs.definition import InputT, JobDefinition, OnSettled, ResultT
from ferry._jobs.facade import (
    checked_priority,
    current_job_driver,
    enqueue,
    enqueue_many,
    enqueue_many_sync,
    enqueue_sync,
    idempotency_key_of,
    parse_input,
)
from ferry._jobs.policy import Concurrency, RateLimit, Retry
from ferry._jobs.results import run_result, run_status
from ferry._names import check_name
from ferry.drivers.protocol import Dedupe, EnqueueResult, RunStatus
from ferry.errors import FerryError

_declared: list[JobDefinition[Any, Any]] = []

R = TypeVar("R")


class Declare(Protocol[InputT]):
    """What ``job(...)`` returns: applied to the body, the handle (``async def`` or ``def``)."""

    @overload
    def __call__(self, body: Callable[..., Awaitable[R]]) -> JobHandle[InputT, R]: ...

    @overload
    def __call__(self, body: Callable[..., R]) -> JobHandle[InputT, R]: ...


class JobHandle(Generic[InputT, ResultT]):
    """A declared job. Enqueue it, describe it; the worker is the only thing that runs it."""

    kind: Literal["job"] = "job"

    def __init__(
        self,
        definition: JobDefinition[InputT, ResultT],
        actor: str | None = None,
        *,
        queue: str | None = None,
    ):
        self._definition = definition
        self._actor = actor
        # A view routed to another queue than the declared one: the Kubernetes scheduler
        # fires a ScheduledTask entry onto its DurableJob's queue, wherever the code put it.
        self._queue = (
            None if queue is None else check_name(queue, what=f"job {definition.name!r} queue")
        )

    @property
    def definition(self) -> JobDefinition[InputT, ResultT]:
        """The declaration (internal: the worker and the facade read it)."""
        return self._definition

    @property
    def name(self) -> str:
        """The durable queue key: export name, explicit ``name=``, or ``anonymous-job-<n>``."""
        return self._definition.name

    @property
    def queue(self) -> str:
        """Where this handle enqueues: the declared queue, unless the view is routed."""
        return self._queue if self._queue is not None else self._definition.queue

    def _routed(self, queue: str | None) -> str | None:
        """The queue an enqueue names: its own ``queue=``, else this view's routing (None:
        the declared queue)."""
        return self._queue if queue is None else queue

    @property
    def retry(self) -> Retry:
        return self._definition.retry

    @property
    def concurrency(self) -> Concurrency[InputT] | None:
        return self._definition.concurrency

    @property
    def rate(self) -> RateLimit[InputT] | None:
        return self._definition.rate

    @property
    def dedupe(self) -> Dedupe:
        """Which stored run of its key an enqueue dedupes against (``dedupe=``)."""
        return self._definition.dedupe

    @property
    def timeout_ms(self) -> int | None:
        return self._definition.timeout_ms

    @property
    def input(self) -> type[InputT]:
        return self._definition.input_model

    @property
    def actor(self) -> str | None:
        """The actor this view enqueues as (``as_actor``), if any."""
        return self._actor

    def as_actor(self, actor: str) -> JobHandle[InputT, ResultT]:
        """This job, enqueuing as ``actor`` (recorded on the run, read as ``ctx.actor``)."""
        return JobHandle(self._definition, check_name(actor, what="actor"), queue=self._queue)

    def idempotency_key_for(self, input: InputT | Mapping[str, Any]) -> str:
        """The idempotency key an enqueue of ``input`` would carry."""
        return idempotency_key_of(self._definition, parse_input(self._definition, input))

    async def enqueue(
        self,
        input: InputT | Mapping[str, Any],
        *,
        run_at: datetime | None = None,
        delay: Duration | None = None,
        queue: str | None = None,
        priority: int | None = None,
        connection: Any = None,
    ) -> EnqueueResult[ResultT]:
        """Queue one run; inside a bound transaction it joins it (commit is the enqueue).
        ``priority`` overrides the declared one for this run (higher is claimed first).
        The answer reads the run's result: ``await (await job.enqueue(i)).result()``."""
        queued = await enqueue(
            self._definition,
            input,
            run_at=run_at,
            delay=delay,
            queue=self._routed(queue),
            priority=priority,
            connection=connection,
            actor=self._actor,
        )
        return replace(queued, source=self)

    async def enqueue_many(
        self,
        inputs: Sequence[InputT | Mapping[str, Any]],
        *,
        queue: str | None = None,
        connection: Any = None,
    ) -> list[EnqueueResult[ResultT]]:
        """Queue many runs in one round trip; results in input order."""
        queued = await enqueue_many(
            self._definition,
            inputs,
            queue=self._routed(queue),
            connection=connection,
            actor=self._actor,
        )
        return [replace(run, source=self) for run in queued]

    def enqueue_sync(
        self,
        input: InputT | Mapping[str, Any],
        *,
        run_at: datetime | None = None,
        delay: Duration | None = None,
        queue: str | None = None,
        priority: int | None = None,
        connection: Any = None,
    ) -> EnqueueResult[ResultT]:
        """``enqueue`` for sync code (a Django view, a sync job body, a script): through a
        blocking connection (psycopg, a SQLAlchemy ``Session``, Django's) in its
        transaction, or without one through the driver's own pool. Refused on a thread
        running an event loop (``X_SYNC_ON_EVENT_LOOP``): ``await enqueue(...)`` there."""
        queued = enqueue_sync(
            self._definition,
            input,
            run_at=run_at,
            delay=delay,
            queue=self._routed(queue),
            priority=priority,
            connection=connection,
            actor=self._actor,
        )
        return replace(queued, source=self)

    def enqueue_many_sync(
        self,
        inputs: Sequence[InputT | Mapping[str, Any]],
        *,
        queue: str | None = None,
        connection: Any = None,
    ) -> list[EnqueueResult[ResultT]]:
        """``enqueue_many`` for sync code, the way ``enqueue_sync`` runs."""
        queued = enqueue_many_sync(
            self._definition,
            inputs,
            queue=self._routed(queue),
            connection=connection,
            actor=self._actor,
        )
        return [replace(run, source=self) for run in queued]

    async def result(self, job_id: str, *, timeout: Duration = "30s") -> ResultT:  # noqa: ASYNC109
        """Run ``job_id``'s result once it completed, typed from the body's return
        annotation, waiting up to ``timeout`` (on the driver's clock) for it to end.

        Refused with the run's own code and last error when it is dead, ``X_JOB_CANCELLED``
        when it was cancelled, ``X_RESULT_TIMEOUT`` when it has not ended in time (it goes
        on), ``X_RUN_NOT_FOUND`` when no run has the id (or it was pruned). The wait hears
        of the end through the driver (NOTIFY, pub/sub, the SQLite watcher), never a tight
        poll. Needs a driver offering ``results``."""
        return await run_result(  # type: ignore[no-any-return]
            current_job_driver(), self._definition, job_id, timeout=timeout
        )

    async def status(self, job_id: str) -> RunStatus:
        """Where run ``job_id`` stands now: state, attempts, progress, its result once
        completed (as stored), its last error. ``X_RUN_NOT_FOUND`` when no run has the id."""
        return await run_status(current_job_driver(), self._definition, job_id)

    def describe(self) -> dict[str, Any]:
        """The manifest row. ``steps`` is empty by design: names are chosen at run time."""
        d = self._definition
        return {
            "kind": "job",
            "name": d.name,
            "queue": d.queue,
            "retry": {
                "attempts": d.retry.attempts,
                "backoff": d.retry.backoff,
                "baseMs": d.retry.base_ms,
                "maxMs": d.retry.max_ms,
            },
            "timeoutMs": d.timeout_ms,
            "tenant": d.tenant is not None,
            "concurrency": None
            if d.concurrency is None
            else {
                "limit": d.concurrency.limit,
                "keyed": d.concurrency.key is not None,
                "whenBusy": d.concurrency.when_busy,
            },
            "rate": None
            if d.rate is None
            else {"limit": d.rate.limit, "perMs": d.rate.per_ms, "keyed": d.rate.key is not None},
            "dedupe": described(d.dedupe),
            "steps": [],
        }

    def __repr__(self) -> str:
        return f"<job {self.name!r} queue={self.queue!r}>"


def job(
    *,
    input: type[InputT],
    idempotency_key: Callable[[InputT], str],
    tenant: Callable[[InputT], str | None] | None = None,
    retry: Retry | None = None,
    timeout: Duration | None = None,
    queue: str = "default",
    concurrency: Concurrency[InputT] | None = None,
    rate: RateLimit[InputT] | None = None,
    on_settled: OnSettled | None = None,
    name: str | None = None,
    priority: int = 0,
    dedupe: DedupeSetting = "retained",
) -> Declare[InputT]:
    """Declare a function as a job. ``idempotency_key`` is required: at-least-once is the
    only honest guarantee, so every run must be replay-safe.

    An ``async def`` body runs on the worker's event loop; a ``def`` body (blocking code:
    an ORM, ``requests``) runs on the worker's thread pool, and its ``step`` is the same
    API without ``await``.

    ``dedupe`` says which stored run of its key an enqueue is deduplicated against:
    ``"retained"`` any run still stored, ``"active"`` a queued, sleeping or running one, a
    duration (``"1h"``) one created within it."""
    if not (isinstance(input, type) and issubclass(input, BaseModel)):
        raise FerryError(
            "X_INVARIANT",
            f"job input {input!r} is not a pydantic model class",
            "declare the input as `class MyInput(pydantic.BaseModel): ...` and pass input=MyInput",
        )
    if not callable(idempotency_key):
        raise FerryError(
            "X_IDEMPOTENCY_REQUIRED",
            f"job idempotency_key {idempotency_key!r} is not a function of the input",
            'pass idempotency_key=lambda i: f"<job>:{i.<id>}"',
        )
    check_name(queue, what="job queue")
    if rate is not None and not isinstance(rate, RateLimit):
        raise FerryError(
            "X_RATE_INVALID",
            f"job rate {rate!r} is not a RateLimit",
            'pass rate=RateLimit(limit=100, per="1m", key=lambda i: i.account_id)',
        )
    # Priority is an integer column and the Redis claim reads it back as a number: a float
    # or a string would be stored and then break every later claim of the worker.
    checked_priority(priority, field="job priority")
    rule = dedupe_rule(dedupe)
    if name is not None:
        check_name(name, what="job name")
    timeout_ms = None if timeout is None else to_ms(timeout, what="job timeout")
    if timeout_ms == 0:
        raise FerryError(
            "X_INVARIANT",
            "job timeout 0 would abort every attempt at once",
            'leave timeout out for no timeout, or give one such as timeout="30s"',
        )

    def declare(body: Callable[..., Any]) -> JobHandle[InputT, Any]:
        definition: JobDefinition[InputT, Any] = JobDefinition(
            body=body,
            input_model=input,
            idempotency_key=idempotency_key,
            tenant=tenant,
            retry=retry if retry is not None else Retry(),
            timeout_ms=timeout_ms,
            queue=queue,
            concurrency=concurrency,
            rate=rate,
            on_settled=on_settled,
            name=name,
            priority=priority,
            dedupe=rule,
        )
        _declared.append(definition)
        return JobHandle(definition)

    return declare


def declared_jobs() -> list[JobDefinition[Any, Any]]:
    """Every job declared in this process, in declaration order."""
    return list(_declared)
