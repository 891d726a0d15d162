"""The shop against a real PostgreSQL: an order and its receipt run commit together (a
waiting worker is woken at once) or roll back together; the dashboard sits behind the app's
own auth; the harness fires the app's task without this file importing it."""

import asyncio

from conftest import Shop
from fastapi_shop.database import sessions
from fastapi_shop.jobs import send_receipt
from fastapi_shop.models import DailyReport, Order
from sqlalchemy import func, select

from ferry.drivers.protocol import RunFilter
from ferry.testing import FrozenClock, Harness


async def _orders() -> list[Order]:
    async with sessions() as session:
        return list((await session.execute(select(Order))).scalars())


async def test_an_order_commits_with_its_receipt_run_and_wakes_a_waiting_worker(
    shop: Shop,
) -> None:
    wake = shop.driver.wake()
    health: asyncio.Queue[bool] = asyncio.Queue()
    wake.add_health_listener(health.put_nowait)
    assert await asyncio.wait_for(health.get(), 10), "the worker's LISTEN session is up"
    await wake.wait(0)  # the (re)connect's own announcement
    waiter = asyncio.create_task(wake.wait(60_000))  # a frozen clock: only NOTIFY ends it

    response = await shop.client.post("/orders", json={"email": "a@x.io", "total_cents": 900})
    assert response.status_code == 201
    assert await asyncio.wait_for(waiter, 10), "the commit woke the waiting worker"
    [run] = await shop.driver.introspect.list_runs(RunFilter(name="send_receipt"))
    assert run.state == "queued"

    trace = await shop.harness.drain()
    assert trace.outcomes(send_receipt) == ["completed"]
    [order] = await _orders()
    assert order.receipt_sent


async def test_a_failed_order_leaves_neither_the_order_nor_the_run(shop: Shop) -> None:
    response = await shop.client.post("/orders", json={"email": "b@x.io", "total_cents": 0})
    assert response.status_code == 422
    assert await _orders() == []
    assert await shop.driver.introspect.list_runs(RunFilter(name="send_receipt")) == []


async def test_the_dashboard_is_behind_the_apps_own_auth(shop: Shop) -> None:
    await shop.client.post("/orders", json={"email": "c@x.io", "total_cents": 100})
    assert (await shop.client.get("/admin/jobs")).status_code == 403
    staff = {"x-staff": "yes"}
    page = await shop.client.get("/admin/jobs", headers=staff)
    assert page.status_code == 200 and "send_receipt" in page.text
    cross_site = await shop.client.post(
        "/admin/jobs/queues/pause", headers={**staff, "origin": "https://evil.example"}
    )
    assert cross_site.status_code == 403, "an action from another site is refused"


async def test_the_nightly_task_fires_without_importing_it(
    tables: None, ferry_harness: Harness, ferry_clock: FrozenClock
) -> None:
    """``ferry_app = shop.jobs`` in pytest.ini: the plugin's harness knows the app's tasks."""
    await ferry_harness.drain()
    ferry_clock.advance("1d")
    trace = await ferry_harness.drain()
    assert trace.outcomes("daily_report") == ["completed"]
    async with sessions() as session:
        count = (await session.execute(select(func.count()).select_from(DailyReport))).scalar()
    assert count == 1
