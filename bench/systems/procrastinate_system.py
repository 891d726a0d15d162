"""procrastinate as its docs run it: ``defer_async``/``batch_defer_async``, ``run_worker_async``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from procrastinate import App, PsycopgConnector
from procrastinate.types import JSONDict

from bench.systems import OnClaim, OnJob, Payload, QueryCounter

_hook: list[OnJob] = []


def _app(dsn: str) -> App:
    app = App(connector=PsycopgConnector(conninfo=dsn))

    @app.task(name="noop")
    async def noop(n: int, t0: float) -> None:
        _hook[0](n, t0)

    return app


class ProcrastinateProducer:
    """Defers through the task, on the app's psycopg pool."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._task = app.tasks["noop"]

    async def enqueue(self, payload: Payload) -> None:
        await self._task.defer_async(**payload)

    async def enqueue_batch(self, payloads: Sequence[Payload]) -> None:
        kwargs: list[JSONDict] = [{"n": p["n"], "t0": p["t0"]} for p in payloads]
        await self._task.batch_defer_async(*kwargs)

    async def close(self) -> None:
        await self._app.close_async()


class ProcrastinateSystem:
    """procrastinate on psycopg, default worker options (listen/notify on)."""

    name = "procrastinate"
    loop = "asyncio"

    async def install(self, dsn: str) -> None:
        async with _app(dsn).open_async() as app:
            await app.schema_manager.apply_schema_async()

    async def counter(self, dsn: str) -> QueryCounter:
        return await QueryCounter.open(
            dsn, "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
        )

    async def producer(self, dsn: str) -> ProcrastinateProducer:
        app = _app(dsn)
        await app.open_async()
        return ProcrastinateProducer(app)

    def worker_settings(self, concurrency: int | None, batch_size: int | None) -> str:
        return f"run_worker_async(concurrency={concurrency or 1})"

    async def work(
        self,
        dsn: str,
        *,
        concurrency: int | None,
        batch_size: int | None,
        on_job: OnJob,
        ready: asyncio.Event,
        stop: asyncio.Event,
        on_claim: OnClaim | None = None,
    ) -> None:
        # on_claim is not honoured: the pinned-horizon workload, the one that times claims,
        # runs ferry and pgqueuer only.
        _hook[:] = [on_job]
        async with _app(dsn).open_async() as app:
            running = asyncio.create_task(
                app.run_worker_async(
                    concurrency=concurrency or 1, wait=True, install_signal_handlers=False
                )
            )
            await asyncio.sleep(0.5)  # its LISTEN connection is opened inside the worker
            ready.set()
            await stop.wait()
            # Cancelling run_worker_async is procrastinate's graceful stop.
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running


SYSTEM = ProcrastinateSystem()
