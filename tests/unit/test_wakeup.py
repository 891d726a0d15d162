"""The timer wake's parts: the soonest instants kept (boundedly), and waiters woken at them."""

from __future__ import annotations

import asyncio

from ferry._clock import FrozenClock
from ferry._wakeup import DueInstants
from ferry.drivers._wake import Arrivals, SettleWaiters


def test_only_the_soonest_instants_are_kept_and_passed_ones_are_taken_once() -> None:
    due = DueInstants(kept=3)
    for instant in (500, 100, 300, 100, 900, 200):
        due.add(instant)
    assert len(due) == 3 and due.soonest == 100  # 900 and then 500 fell off: the poll finds them
    assert due.take_due(150) is True
    assert due.soonest == 200
    assert due.take_due(150) is False, "an instant is taken once"
    assert due.take_due(10_000) is True and due.soonest is None


async def _settle() -> None:
    """Let the waiters run until they sleep again (bounded yields, no wall-clock wait)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_waiter_wakes_at_an_expected_instant_and_re_arms_for_a_sooner_one() -> None:
    clock = FrozenClock()
    wakeup = Arrivals(clock)
    start = clock.now_ms()
    waiting = asyncio.ensure_future(wakeup.wait(5_000))
    await _settle()
    assert clock.next_deadline_ms() == start + 5_000
    wakeup.expect(start + 800)
    wakeup.expect(start + 200)
    await _settle()
    assert clock.next_deadline_ms() == start + 200 and not waiting.done()
    clock.advance("200ms")
    assert await asyncio.wait_for(waiting, 5) is True
    again = asyncio.ensure_future(wakeup.wait(5_000))
    await _settle()
    assert clock.next_deadline_ms() == start + 800 and not again.done()
    clock.advance("600ms")
    assert await asyncio.wait_for(again, 5) is True


async def test_an_announcement_wakes_every_waiter_and_is_kept_for_a_busy_one() -> None:
    wakeup = Arrivals(FrozenClock())
    waiters = [asyncio.ensure_future(wakeup.wait(60_000)) for _ in range(2)]
    await _settle()
    wakeup.announce()
    assert await asyncio.wait_for(asyncio.gather(*waiters), 5) == [True, True]
    wakeup.announce()  # nobody waits now: the next wait sees it at once
    assert await wakeup.wait(60_000) is True
    assert await wakeup.wait(0) is False, "seen once, not replayed"


class _Healthy:
    healthy = True


async def test_a_result_waiter_wakes_for_its_own_runs_and_keeps_news_between_waits() -> None:
    """``SettleWaiters``: news of other runs leaves a watch asleep; news of one of its runs
    wakes it, and news told while it was busy is kept for its next wait."""
    clock = FrozenClock()
    news = SettleWaiters(_Healthy(), clock, idle_poll_ms=5_000, unhealthy_poll_ms=1_000)  # type: ignore[arg-type]
    watch = news.watch(["7", "8"])
    waiting = asyncio.ensure_future(watch.wait(5_000))
    await _settle()
    news.heard("1,2,3")
    await _settle()
    assert not waiting.done()
    news.heard("2,8")
    assert await asyncio.wait_for(waiting, 5) is True
    news.settled(["7"])  # told while nobody waits: the next wait returns at once
    assert await asyncio.wait_for(watch.wait(5_000), 5) is True
    again = asyncio.ensure_future(watch.wait(5_000))
    await _settle()
    clock.advance("5s")  # nothing came: the wait times out on the clock
    assert await asyncio.wait_for(again, 5) is False
    news.announce()  # a reconnect: anything may have ended
    assert await asyncio.wait_for(watch.wait(5_000), 5) is True
    watch.close()
    news.settled(["7"])  # a closed watch is forgotten
    assert news.idle_poll_ms == 5_000
