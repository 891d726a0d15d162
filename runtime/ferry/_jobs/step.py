"""Durable steps: ``step.run`` memoized per run, ``step.sleep`` that parks the run.

The step is the retry unit, not the job: a retry re-enters the body, replays every
recorded step from the store without calling it, and runs only the one that failed.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar, overload

from ferry._bounds import check_instant_ms
from ferry._clock import Clock
from ferry._duration import Duration, to_ms
from ferry._jobs.signal import AbortSignal
from ferry._payload import to_json
from ferry._storable import checked_key, quoted
from ferry.drivers.protocol import StepRecord, StepStore
from ferry.errors import FerryError

T = TypeVar("T")


class StepObserver(Protocol):
    """Told about every step a run actually executes (not replays)."""

    def step_executed(self, job_name: str, job_id: str, step_name: str) -> None: ...


class Parked(Exception):
    """Raised through the body by ``step.sleep``: park the run until ``wake_at_ms``.

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
        store: StepStore,
        signal: AbortSignal,
        clock: Clock,
        observer: StepObserver | None = None,
    ) -> None:
        self._job_name = job_name
        self._job_id = job_id
        self._worker_id = worker_id
        self._store = store
        self._signal = signal
        self._clock = clock
        self._observer = observer
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
        recorded = await self._claim_name(name)
        if recorded is not None:
            return recorded.result
        self._refuse_if_aborted(name)
        started = self._clock.now_ms()
        if self._observer is not None:
            self._observer.step_executed(self._job_name, self._job_id, name)
        value = fn(self._signal) if _takes_signal(fn) else fn()
        if inspect.isawaitable(value):
            value = await value
        self._refuse_if_aborted(name)
        result = to_json(value, what=f'step "{name}" result')
        await self._record(StepRecord(name, "run", result, started, self._clock.now_ms()))
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
            raise FerryError(
                "X_LEASE_LOST",
                f'step "{record.name}" of job "{self._job_name}" was not recorded: this '
                "worker no longer holds the run",
                "nothing to fix here — another worker owns the run now; keep steps short "
                "and idempotent",
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
