"""Durable steps: ``step.run`` memoized per run, ``step.sleep`` that parks the run, and
``step.enqueue`` / ``step.wait``, a fan-out and the fan-in that parks until it ends.

The step is the retry unit, not the job: a retry re-enters the body, replays every
recorded step from the store without calling it, and runs only the one that failed.

A step's function may be sync or async. In an ``async def`` body a sync function runs on
the worker's thread pool, so a blocking call inside a step never stalls the event loop;
a ``def`` body gets ``SyncStep``, the same steps without ``await``, whose functions run on
the body's own thread while the store is reached through the loop.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast, overload

from ferry._bounds import check_instant_ms
from ferry._duration import Duration, to_ms
from ferry._jobs.children import Child, ChildOutcome, Children, outcome_json, outcome_of
from ferry._jobs.declaration import JobHandle
from ferry._jobs.facade import build_request
from ferry._jobs.results import statuses
from ferry._jobs.signal import AbortSignal
from ferry._jobs.threads import ThreadPool
from ferry._payload import to_json
from ferry._storable import checked_key, quoted
from ferry.drivers.capabilities import CHILDREN, RESULTS, need
from ferry.drivers.protocol import EnqueueRequest, JobDriver, RunFence, StepRecord
from ferry.errors import FerryError

T = TypeVar("T")
R = TypeVar("R")

FAN_OUT_BATCH = 1_000
"""Children written per round trip by ``step.enqueue`` (each batch one statement or
script): a fan-out of any size is a bounded number of bounded writes."""


class StepObserver(Protocol):
    """Told about every step a run actually executes (not replays)."""

    def step_executed(self, job_name: str, job_id: str, step_name: str) -> None: ...


class Parked(Exception):
    """Raised through the body by ``step.sleep`` (and ``step.wait``): park the run until
    ``wake_at_ms``.

    An exception and not a return value so a sleep deep inside helpers still parks the
    whole run; ``execute_job`` catches it and settles the attempt as uncounted.
    """

    def __init__(self, step_name: str, wake_at_ms: int) -> None:
        super().__init__(f"step.sleep({step_name!r}) parks the run")
        self.step_name = step_name
        self.wake_at_ms = wake_at_ms


class Step:
    """The ``step`` a job body receives."""

    def __init__(
        self,
        *,
        job_name: str,
        job_id: str,
        worker_id: str,
        driver: JobDriver,
        signal: AbortSignal,
        threads: ThreadPool,
        observer: StepObserver | None = None,
        fenced: Callable[[str], None] | None = None,
    ) -> None:
        self._threads = threads
        self._job_name = job_name
        self._job_id = job_id
        self._worker_id = worker_id
        self._driver = driver
        self._store = driver.steps
        self._signal = signal
        self._clock = driver.clock
        self._observer = observer
        self._fenced = fenced
        """Told the name of a step whose record the fence refused (the run is another
        worker's now) before ``step.run`` raises, so the attempt ends ``superseded``."""
        self._recorded: Mapping[str, StepRecord] | None = None
        self._seen: set[str] = set()

    @overload
    async def run(self, name: str, fn: Callable[..., Awaitable[T]]) -> T: ...
    @overload
    async def run(self, name: str, fn: Callable[..., T]) -> T: ...

    async def run(self, name: str, fn: Callable[..., Any]) -> Any:
        """Run ``fn`` once per run and record its JSON result; a replay returns the record.

        ``fn`` takes no argument, or one: the run's abort signal. The value returned is
        the JSON form of the result (fresh lists and dicts), the first time exactly as on
        every replay.
        """
        recorded, started = await self.begin(name)
        if recorded is not None:
            return recorded.result
        call = _bound(fn, self._signal)
        value: Any
        if inspect.iscoroutinefunction(fn):
            value = await cast("Awaitable[Any]", call())
        else:
            value = await self._threads.run(call)  # off the loop: it may block
            if inspect.isawaitable(value):  # a lambda returning a coroutine
                value = await value
        return await self.finish(name, started, value)

    async def begin(self, name: str) -> tuple[StepRecord | None, int]:
        """The recorded step to replay, or (``None``) leave to run it now and its start."""
        recorded = await self._claim_name(name)
        if recorded is not None:
            return recorded, 0
        self._refuse_if_aborted(name)
        if self._observer is not None:
            self._observer.step_executed(self._job_name, self._job_id, name)
        return None, self._clock.now_ms()

    async def finish(self, name: str, started_ms: int, value: Any) -> Any:
        """Record what the step's function returned (unless the run aborted meanwhile);
        answers its JSON form."""
        self._refuse_if_aborted(name)
        result = to_json(value, what=f'step "{name}" result')
        await self._record(StepRecord(name, "run", result, started_ms, self._clock.now_ms()))
        return result

    async def sleep(self, name: str, duration: Duration) -> None:
        """Park the run for ``duration`` without holding a worker or counting an attempt."""
        wait_ms = to_ms(duration, what=f"step.sleep({quoted(name)})")
        recorded = await self._claim_name(name)
        now = self._clock.now_ms()
        if recorded is None:
            self._refuse_if_aborted(name)
            wake_at = check_instant_ms(now + wait_ms, field=f"step.sleep({quoted(name)}) wake")
            await self._record(StepRecord(name, "sleep", None, now, now, wake_at))
            if self._observer is not None:
                self._observer.step_executed(self._job_name, self._job_id, name)
        else:
            wake_at = recorded.wake_at_ms if recorded.wake_at_ms is not None else now
        if wake_at > now:
            raise Parked(name, wake_at)

    async def enqueue(
        self, name: str, children: Iterable[tuple[JobHandle[Any, R], Any]]
    ) -> Children[R]:
        """Enqueue ``children`` — ``(job, input)`` pairs — once per run, as children of
        this run; answers them (what ``step.wait`` takes).

        Memoized like ``step.run``: a retry or a resumed run gets the same children back
        and enqueues nothing. Every pair is checked before anything is written (a refusal
        names ``children[i]``); the children are written ``FAN_OUT_BATCH`` to a round
        trip, each batch fenced on this worker's lease, and a retry after a crash
        between batches writes only what is missing: a child's idempotency key is its
        job's key scoped to this run and step, so a child is never enqueued twice (and
        the same input twice in one list is one child). Needs a driver offering
        ``children``."""
        given = _pairs(name, children)
        jobs = {handle.name: handle.definition for handle, _ in given}
        recorded = await self._claim_name(name)
        if recorded is not None:
            return Children.from_json(name, recorded.result, jobs)
        self._refuse_if_aborted(name)
        store = need(self._driver, CHILDREN, by=f'step.enqueue("{name}")')
        requests = self._child_requests(name, given)
        started = self._clock.now_ms()
        if self._observer is not None:
            self._observer.step_executed(self._job_name, self._job_id, name)
        written = []
        fence = RunFence(self._job_id, self._worker_id)
        for start in range(0, len(requests), FAN_OUT_BATCH):
            answer = await store.enqueue_children(fence, requests[start : start + FAN_OUT_BATCH])
            if answer == "not-held":
                raise self._not_held(name)
            if answer == "cancel-requested":
                self._signal.abort(_cancelled(self._job_name, self._job_id))
                self._refuse_if_aborted(name)
            assert not isinstance(answer, str)
            written += answer
        result: Children[R] = Children(
            name,
            [
                Child(handle.name, run.job_id, handle.definition)
                for (handle, _), run in zip(given, written, strict=True)
            ],
        )
        self._refuse_if_aborted(name)
        await self._record(StepRecord(name, "run", result.to_json(), started, self._clock.now_ms()))
        return result

    async def wait(
        self,
        name: str,
        children: Children[R],
        *,
        timeout: Duration,  # noqa: ASYNC109 (a durable wait on the driver's clock)
    ) -> list[ChildOutcome[R]]:
        """Each child's outcome, in order, once every one has ended — completed (with its
        typed result), dead (with its code) or cancelled.

        Until then the run is parked like ``step.sleep``: no worker held, no attempt
        counted. It becomes due again when its last child ends or is deleted before its
        end (in the transaction or script of that end or delete), or at the deadline,
        ``timeout`` after the first call; past the deadline with children still going,
        the wait fails the attempt with ``X_WAIT_TIMEOUT`` (retried like any failure: a
        retry finds the children that ended meanwhile). A deleted child has no outcome:
        the wait fails the attempt with ``X_RUN_NOT_FOUND`` naming it. One count per
        run, not per wait: the run wakes when all the children it enqueued have ended.
        Memoized once it returns. Needs a driver offering ``results`` and
        ``children``."""
        if not isinstance(children, Children):
            raise FerryError(
                "X_INVARIANT",
                f'step.wait("{name}") children is a {type(children).__name__}, not the '
                "children a step.enqueue answered",
                f'pass what step.enqueue returned: children = await step.enqueue("fan-out", '
                f'...); await step.wait("{name}", children, timeout="1d")',
            )
        wait_for = to_ms(timeout, what=f'step.wait("{name}") timeout')
        recorded = await self._claim_name(name)
        if recorded is not None and recorded.kind == "run":
            return [outcome_of(children.definition_of, o) for o in recorded.result]
        now = self._clock.now_ms()
        deadline = recorded.wake_at_ms if recorded is not None else None
        if deadline is None:
            deadline = check_instant_ms(now + wait_for, field=f'step.wait("{name}") deadline')
        self._refuse_if_aborted(name)
        results = need(self._driver, RESULTS, by=f'step.wait("{name}")')
        store = need(self._driver, CHILDREN, by=f'step.wait("{name}")')
        found = await statuses(results, children.ids)
        if all(status is None or status.ended for status in found):
            outcomes = [outcome_json(c, status) for c, status in zip(children, found, strict=True)]
            if self._observer is not None:
                self._observer.step_executed(self._job_name, self._job_id, name)
            self._refuse_if_aborted(name)
            started = recorded.started_at_ms if recorded is not None else now
            await self._record(StepRecord(name, "run", outcomes, started, self._clock.now_ms()))
            return [outcome_of(children.definition_of, o) for o in outcomes]
        if now >= deadline:
            going = sum(1 for status in found if status is not None and not status.ended)
            raise FerryError(
                "X_WAIT_TIMEOUT",
                f'step.wait("{name}") of job "{self._job_name}" run {self._job_id}: '
                f"{going} of {len(children)} children had not ended by its deadline",
                "give the wait a longer timeout, or find out why those children are slow "
                f"(`ferry jobs show {self._job_id}` lists them)",
            )
        if recorded is None:
            await self._record(StepRecord(name, "sleep", None, now, now, deadline))
        if not await store.await_children(RunFence(self._job_id, self._worker_id)):
            raise self._not_held(name)
        raise Parked(name, deadline)

    def _child_requests(
        self, name: str, given: Sequence[tuple[JobHandle[Any, Any], Any]]
    ) -> list[EnqueueRequest]:
        """Every child's request, checked before any is written (``children[i]`` named)."""
        requests = []
        for index, (handle, value) in enumerate(given):
            try:
                requests.append(
                    build_request(
                        handle.definition,
                        value,
                        queue=handle.queue,
                        actor=handle.actor,
                        key_prefix=f"child:{self._job_id}:{name}",
                        max_payload_bytes=self._driver.max_payload_bytes,
                    )
                )
            except FerryError as refused:
                raise FerryError(
                    refused.code,
                    f'step.enqueue("{name}") children[{index}]: {refused.message}',
                    refused.fix,
                ) from None
        return requests

    def _not_held(self, name: str) -> FerryError:
        return FerryError(
            "X_LEASE_LOST",
            f'step "{name}" of job "{self._job_name}" did nothing: this worker no longer '
            "holds the run",
            "nothing to fix here — another worker owns the run now; keep steps short "
            "and idempotent",
        )

    async def _claim_name(self, name: str) -> StepRecord | None:
        if not isinstance(name, str) or not name:
            raise FerryError(
                "X_INVARIANT",
                f'step name {name!r} in job "{self._job_name}" is not a non-empty string',
                'name every step with a stable string, e.g. step.run("provision", ...)',
            )
        # A step name is half of its row's primary key: text every driver stores, short
        # enough for the index (else the step's write fails inside the database client).
        checked_key(
            name,
            what=f'job "{self._job_name}" step name',
            code="X_INVARIANT",
            fix="name the step with a short stable string; in a loop add the item's id",
        )
        if name in self._seen:
            raise FerryError(
                "X_STEP_DUPLICATE",
                f'job "{self._job_name}" ran step "{name}" twice in one run',
                "give each step a distinct name — in a loop include the item, "
                'e.g. f"sync:{row.id}"',
            )
        self._seen.add(name)
        if self._recorded is None:
            self._recorded = await self._store.load(self._job_id)
        return self._recorded.get(name)

    def _refuse_if_aborted(self, name: str) -> None:
        reason = self._signal.reason
        if reason is not None:
            raise FerryError(
                "X_ABORTED",
                f'step "{name}" of job "{self._job_name}" was not recorded: the run was '
                f"aborted ({reason.code})",
                "nothing to fix here — the step runs again from its start when the run "
                "resumes; pass ctx.signal to slow calls so they stop promptly",
            )

    async def _record(self, record: StepRecord) -> None:
        if not await self._store.record(self._job_id, record, worker_id=self._worker_id):
            if self._fenced is not None:
                self._fenced(record.name)
            raise FerryError(
                "X_LEASE_LOST",
                f'step "{record.name}" of job "{self._job_name}" was not recorded: this '
                "worker no longer holds the run",
                "nothing to fix here — another worker owns the run now; keep steps short "
                "and idempotent",
            )


class SyncStep:
    """The ``step`` a ``def`` body receives: ``Step`` without ``await``, called from the
    body's thread. The function runs right here, on that thread; loading and recording go
    to the store through the worker's event loop."""

    def __init__(self, step: Step, loop: asyncio.AbstractEventLoop) -> None:
        self._step = step
        self._loop = loop

    def run(self, name: str, fn: Callable[..., T]) -> T:
        """``Step.run`` for a sync function: once per run, its JSON result recorded."""
        if inspect.iscoroutinefunction(fn):
            raise FerryError(
                "X_INVARIANT",
                f'step "{name}" of a sync job body was given the async function '
                f"{fn.__qualname__!r}, which this thread cannot await",
                "give a sync body's steps sync functions, or declare the body `async def`",
            )
        recorded, started = self._on_loop(self._step.begin(name))
        if recorded is not None:
            return recorded.result  # type: ignore[no-any-return]
        value = _bound(fn, self._step._signal)()
        return self._on_loop(self._step.finish(name, started, value))  # type: ignore[no-any-return]

    def sleep(self, name: str, duration: Duration) -> None:
        """``Step.sleep``: parks the run (the body's thread unwinds through ``Parked``)."""
        self._on_loop(self._step.sleep(name, duration))

    def enqueue(self, name: str, children: Iterable[tuple[JobHandle[Any, R], Any]]) -> Children[R]:
        """``Step.enqueue``: the children written once per run."""
        return self._on_loop(self._step.enqueue(name, children))

    def wait(
        self,
        name: str,
        children: Children[R],
        *,
        timeout: Duration,
    ) -> list[ChildOutcome[R]]:
        """``Step.wait``: their outcomes, or the run parks (through ``Parked``, as a sleep)."""
        return self._on_loop(self._step.wait(name, children, timeout=timeout))

    def _on_loop(self, call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()


def _bound(fn: Callable[..., T], signal: AbortSignal) -> Callable[[], T]:
    """``fn`` as a call of no arguments: given the run's signal if it takes one."""
    if _takes_signal(fn):
        return lambda: fn(signal)
    return fn


def _pairs(name: str, children: object) -> list[tuple[JobHandle[Any, Any], Any]]:
    """``children`` as ``(job, input)`` pairs, or ``X_INVARIANT`` naming the first entry
    that is not one."""
    if isinstance(children, str | bytes | Mapping) or not isinstance(children, Iterable):
        raise FerryError(
            "X_INVARIANT",
            f'step.enqueue("{name}") children is a {type(children).__name__}, not a list of '
            "(job, input) pairs",
            'pass a list such as [(send_mail, {"user_id": u}) for u in users]',
        )
    pairs = []
    for index, entry in enumerate(children):
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], JobHandle)):
            shown = type(entry[0] if isinstance(entry, tuple) and entry else entry).__name__
            raise FerryError(
                "X_INVARIANT",
                f'step.enqueue("{name}") children[{index}] is not a (job, input) pair '
                f"(it holds a {shown} where a job declared with @job belongs)",
                "give each child as a tuple of the job handle and its input, e.g. "
                '(send_mail, {"user_id": 7})',
            )
        pairs.append((entry[0], entry[1]))
    return pairs


def _cancelled(job_name: str, job_id: str) -> FerryError:
    """The abort of a run whose fan-out found an operator's cancel (as its heartbeat would)."""
    return FerryError(
        "X_CANCELLED",
        f'run {job_id} of job "{job_name}" was cancelled by an operator while it ran',
        f"retry it with `ferry jobs retry {job_id}` if that was a mistake",
    )


def _takes_signal(fn: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in parameters
    )
