"""Every feature that needs a capability refuses on a driver that offers only the core
(``support.core_only``), at its start, with ``X_DRIVER_CAPABILITY`` naming the driver,
the capability and what needed it; concurrency keeps the spec's own code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from pydantic import BaseModel
from support.core_only import CoreOnlyDriver

from ferry import Concurrency, RateLimit, Step, backfill, job, set_job_driver, webhook
from ferry._admin.app import admin_app
from ferry._admin.sessions import Sessions
from ferry._clock import FrozenClock
from ferry._jobs.policy import Caps
from ferry._maintenance import Maintenance
from ferry._move import move_runs
from ferry._operations import list_runs
from ferry._operations.access import Access
from ferry._outbox import JobOutboxPublisher, OutboxRelay
from ferry._scheduler import Scheduler, SchedulerStore
from ferry._worker import JobWorker
from ferry.drivers import memory_job_driver
from ferry.drivers.capabilities import CAPABILITIES, capabilities_of
from ferry.errors import FerryError
from ferry.tasks import task


class Item(BaseModel):
    id: str


@job(input=Item, idempotency_key=lambda i: f"plain:{i.id}", name="refusals.plain")
async def plain(input: Item) -> None:
    return None


@job(input=Item, idempotency_key=lambda i: f"fans:{i.id}", name="refusals.fans")
async def fans_out(input: Item, step: Step) -> None:
    await step.enqueue("fan-out", [(plain, {"id": f"{input.id}-child"})])


@job(
    input=Item,
    idempotency_key=lambda i: f"capped:{i.id}",
    concurrency=Concurrency(key=lambda i: i.id, limit=1),
    name="refusals.capped",
)
async def capped(input: Item) -> None:
    return None


@job(
    input=Item,
    idempotency_key=lambda i: f"rated:{i.id}",
    rate=RateLimit(limit=10, per="1s"),
    name="refusals.rated",
)
async def rated(input: Item) -> None:
    return None


async def _missing(*_: Any) -> None:
    return None


hook = webhook(name="refusals.hook", endpoint=_missing, event=_missing)


async def _no_page(input: Item, cursor: Any) -> Any:
    raise AssertionError("never runs")


async def _no_handle(input: Item, items: Any) -> None:
    raise AssertionError("never runs")


pages = backfill(
    input=Item,
    idempotency_key=lambda i: f"pages:{i.id}",
    page=_no_page,
    handle=_no_handle,
    name="refusals.pages",
)
nightly = task(
    cron="0 3 * * *", tz="UTC", enqueue=lambda occurrence_ms: [], name="refusals.nightly"
)


@pytest.fixture
def core() -> CoreOnlyDriver:
    return CoreOnlyDriver(FrozenClock())


async def refused(start: Callable[[], Awaitable[Any] | Any], capability: str, by: str) -> None:
    with pytest.raises(FerryError) as caught:
        started = start()
        if isinstance(started, Awaitable):
            await started
    error = caught.value
    assert error.code == "X_DRIVER_CAPABILITY"
    assert f'capability "{capability}"' in error.message and by in error.message
    assert "core-only driver" in error.message and error.fix


async def test_the_scheduler_needs_leases_and_records(core: CoreOnlyDriver) -> None:
    await refused(lambda: Scheduler(driver=core, tasks=[nightly]), "leases", "the scheduler")


async def test_maintenance_needs_leases(core: CoreOnlyDriver) -> None:
    await refused(lambda: Maintenance(core, holder="m"), "leases", "maintenance")


async def test_paused_tasks_and_ticks_need_records(core: CoreOnlyDriver) -> None:
    await refused(lambda: SchedulerStore(core, by="tasks pause"), "leases", "tasks pause")


async def test_a_worker_with_a_webhook_or_a_backfill_needs_records(core: CoreOnlyDriver) -> None:
    for handle in (hook, pages):
        worker = JobWorker(driver=core, jobs=[plain, handle])
        await refused(worker.run_due, "records", f'job "{handle.name}"')


async def test_the_worker_caps_need_slots_and_concurrency_keeps_its_own_code(
    core: CoreOnlyDriver,
) -> None:
    worker = JobWorker(driver=core, jobs=[plain], caps=Caps(total=2))
    await refused(worker.run_due, "slots", "caps")
    with pytest.raises(FerryError) as caught:
        await JobWorker(driver=core, jobs=[capped]).run_due()
    assert caught.value.code == "X_JOB_CONCURRENCY_UNENFORCEABLE"


async def test_a_worker_with_a_rated_job_needs_rate_windows(core: CoreOnlyDriver) -> None:
    worker = JobWorker(driver=core, jobs=[plain, rated])
    await refused(worker.run_due, "rates", 'job "refusals.rated"')


async def test_the_dashboard_needs_introspection_and_records(core: CoreOnlyDriver) -> None:
    await refused(
        lambda: admin_app(core, access=Access(insecure_dev=True)), "introspect", "the dashboard"
    )
    await refused(lambda: Sessions(core), "records", "sign-out")


async def test_operator_reads_need_introspection(core: CoreOnlyDriver) -> None:
    await refused(lambda: list_runs(core, {}), "introspect", "operator reads")


async def test_the_relay_needs_an_outbox(core: CoreOnlyDriver) -> None:
    publisher = JobOutboxPublisher(None)  # type: ignore[arg-type]
    await refused(lambda: OutboxRelay(source=core, publisher=publisher), "outbox", "relay")


async def test_a_drain_needs_transfer_on_both_stores(core: CoreOnlyDriver) -> None:
    other = memory_job_driver()
    await refused(lambda: move_runs(core, other, drain_id="d", batch=10), "transfer", "out")
    await refused(lambda: move_runs(other, core, drain_id="d", batch=10), "transfer", "in")


async def test_results_need_results_and_a_fan_out_needs_children(core: CoreOnlyDriver) -> None:
    """A result is asked for where it is awaited, and a fan-out runs inside a body: each is
    refused there (a body's steps are chosen at run time, so no worker can refuse them at
    its start); the run whose fan-out was refused dies with the refusal as its error."""
    previous = set_job_driver(core)
    try:
        queued = await plain.enqueue({"id": "1"})
        await refused(lambda: plain.result(queued.job_id), "results", '"refusals.plain".result()')
        await refused(lambda: queued.status(), "results", '"refusals.plain".status()')
        fanned = await fans_out.enqueue({"id": "2"})
        worker = JobWorker(driver=core, jobs=[plain, fans_out])
        clock = core.clock
        assert isinstance(clock, FrozenClock)
        while await worker.run_due():
            clock.advance("1m")  # through the retries' backoff
    finally:
        set_job_driver(previous)
    run = await core.inner.introspect.get_run(fanned.job_id)
    assert run is not None and run.summary.state == "dead"
    assert run.summary.last_error is not None
    assert run.summary.last_error.code == "X_DRIVER_CAPABILITY"
    assert 'step.enqueue("fan-out") needs' in run.summary.last_error.message
    assert 'capability "children"' in run.summary.last_error.message


def test_a_driver_lists_what_it_offers(core: CoreOnlyDriver) -> None:
    assert capabilities_of(core) == []
    assert capabilities_of(memory_job_driver()) == [c.name for c in CAPABILITIES]
