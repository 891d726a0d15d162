"""The outbox's relay side, the same on every driver: a claim leases the oldest unpublished
entries, a lapsed lease offers an entry again (counting the claim), and only the relay
that holds an entry marks it published, once. Time is the frozen clock's."""

from __future__ import annotations

from ferry._clock import FrozenClock
from ferry.drivers.protocol import JobDriver

from .conftest import Append


async def test_a_claim_leases_the_oldest_entries_and_a_lapsed_lease_offers_them_again(
    driver: JobDriver, clock: FrozenClock, append: Append
) -> None:
    await driver.open()  # before the application's first transaction (SQLite)
    appended_at = clock.now_ms()
    ids = [await append(f"e{n}", {"n": n}) for n in range(3)]
    first = await driver.outbox.claim(relay_id="a", lease_ms=10_000, limit=2)
    assert [(e.id, e.type, e.payload, e.attempts) for e in first] == [
        (ids[0], "e0", {"n": 0}, 1),
        (ids[1], "e1", {"n": 1}, 1),
    ]
    assert {(e.created_at_ms, e.traceparent) for e in first} == {(appended_at, None)}
    assert await driver.outbox.claim(relay_id="b", lease_ms=10_000, limit=0) == []

    clock.advance("1s")
    [third] = await driver.outbox.claim(relay_id="b", lease_ms=10_000, limit=5)
    assert third.id == ids[2]
    assert await driver.outbox.claim(relay_id="b", lease_ms=10_000, limit=5) == []
    assert await driver.outbox.pending() == 3, "leased is not published"

    clock.advance("9s")  # a's lease lapses at its instant; b's has a second left
    ids.append(await append("e3", {"n": 3}))
    again = await driver.outbox.claim(relay_id="b", lease_ms=10_000, limit=2)
    assert [(e.id, e.attempts) for e in again] == [(ids[0], 2), (ids[1], 2)], "oldest first"
    [fourth] = await driver.outbox.claim(relay_id="b", lease_ms=10_000, limit=5)
    assert (fourth.id, fourth.attempts) == (ids[3], 1)


async def test_only_the_relay_holding_an_entry_marks_it_published_and_only_once(
    driver: JobDriver, clock: FrozenClock, append: Append
) -> None:
    await driver.open()
    first, second = await append("a", {}), await append("b", {})
    await driver.outbox.claim(relay_id="a", lease_ms=10_000, limit=2)
    assert await driver.outbox.mark_published([first, "nope", "0"], relay_id="b") == []

    await driver.outbox.publish_failed(first, relay_id="a", error="broker down")
    await driver.outbox.publish_failed("nope", relay_id="a", error="no such entry")
    assert await driver.outbox.claim(relay_id="b", lease_ms=10_000, limit=5) == [], (
        "a failed publish keeps its lease until it lapses"
    )
    assert await driver.outbox.mark_published([first], relay_id="a") == [first]
    assert await driver.outbox.mark_published([first], relay_id="a") == [], "published once"
    assert await driver.outbox.pending() == 1

    clock.advance("10s")
    [again] = await driver.outbox.claim(relay_id="b", lease_ms=10_000, limit=5)
    assert (again.id, again.attempts) == (second, 2), "a published entry is never offered"
    assert await driver.outbox.mark_published([second], relay_id="a") == [], "a's lease lapsed"
    assert await driver.outbox.mark_published([second], relay_id="b") == [second]
    assert await driver.outbox.pending() == 0
