"""Fleet caps: per tenant, per queue and in total, held through the driver's slots."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ferry import FerryError, job
from ferry._jobs.execute import execute_job
from ferry._jobs.observer import ExecutionReport
from ferry._worker import Caps
from ferry.drivers.protocol import ClaimedJob, ClaimOptions
from ferry.testing import Harness

LEASE = 30_000


class Order(BaseModel):
    id: str
    org: str


@job(
    input=Order,
    tenant=lambda i: i.org,
    idempotency_key=lambda i: f"order:{i.id}",
    name="conformance.order",
)
async def place_order(input: Order) -> str:
    return input.id


async def run_next(harness: Harness, caps: Caps) -> ExecutionReport:
    [claimed] = await harness.driver.claim(ClaimOptions("w1", LEASE, limit=1))
    return await execute(harness, claimed, caps)


async def execute(harness: Harness, claimed: ClaimedJob, caps: Caps) -> ExecutionReport:
    return await execute_job(
        claimed, driver=harness.driver, worker_id="w1", lease_ms=LEASE, caps=caps
    )


async def test_a_full_tenant_cap_defers_that_tenant_only(harness: Harness) -> None:
    leases = harness.driver.slots
    assert leases is not None
    await leases.acquire("cap:tenant:acme", holder="elsewhere", limit=1, ttl_ms=LEASE)
    caps = Caps(per_tenant=1)
    acme = (await place_order.enqueue({"id": "1", "org": "acme"})).job_id
    report = await run_next(harness, caps)
    assert (report.outcome, report.code) == ("deferred", "X_CAP_REACHED")
    assert "cap:tenant:acme" in (report.message or "")
    run = await harness.driver.introspect.get_run(acme)
    assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)
    await place_order.enqueue({"id": "2", "org": "globex"})
    [globex] = await harness.driver.claim(ClaimOptions("w1", LEASE, limit=1))
    assert (await execute(harness, globex, caps)).outcome == "completed"


async def test_a_run_that_finds_one_cap_full_gives_back_the_caps_it_took(
    harness: Harness,
) -> None:
    leases = harness.driver.slots
    assert leases is not None
    await leases.acquire("cap:total", holder="elsewhere", limit=1, ttl_ms=LEASE)
    caps = Caps(per_tenant=5, per_queue={"default": 5}, total=1)
    await place_order.enqueue({"id": "1", "org": "acme"})
    report = await run_next(harness, caps)
    assert (report.outcome, report.code) == ("deferred", "X_CAP_REACHED")
    assert await leases.holders("cap:tenant:acme") == []
    assert await leases.holders("cap:queue:default") == []


async def test_the_settle_releases_every_cap_slot_the_run_held(harness: Harness) -> None:
    caps = Caps(per_tenant=1, per_queue={"default": 1}, total=1)
    await place_order.enqueue({"id": "1", "org": "acme"})
    assert (await run_next(harness, caps)).outcome == "completed"
    leases = harness.driver.slots
    assert leases is not None
    for key in ("cap:tenant:acme", "cap:queue:default", "cap:total"):
        assert await leases.holders(key) == [], key
    await place_order.enqueue({"id": "2", "org": "acme"})
    assert (await run_next(harness, caps)).outcome == "completed"


@pytest.mark.parametrize("bad", [{"per_tenant": 0}, {"total": -1}, {"per_queue": {"q": 0}}])
def test_a_cap_below_one_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(FerryError) as refused:
        Caps(**bad)  # type: ignore[arg-type]
    assert refused.value.code == "X_INVARIANT" and "Caps(" in refused.value.message
