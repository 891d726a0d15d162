"""Property: any Unicode/JSON input either enqueues and comes back exactly, or is refused.

Random keys and payloads — NUL, lone surrogates, astral characters, huge and non-finite
numbers, deep and wide nesting — go through the facade on every driver. Each one is
either stored and read back equal (through ``claim`` and through ``get_run``) with the
idempotency key as written, or refused with one of the payload and key codes and no row.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ferry import FerryError
from ferry.drivers.protocol import AckOptions, ClaimOptions, RunFilter
from ferry.testing import Harness

from .jobs_storable import blob

REFUSALS = {
    "X_PAYLOAD_NOT_JSON",
    "X_PAYLOAD_TOO_DEEP",
    "X_PAYLOAD_TOO_LARGE",
    "X_TEXT_NOT_STORABLE",
    "X_IDEMPOTENCY_KEY_INVALID",
}
CLAIM = ClaimOptions(worker_id="property", lease_ms=60_000, limit=10)

#: Characters a store might trip on: three no UTF-8 store keeps, the rest stored as written.
SPECIAL = ["\x00", "\ud800", "\udfff", "\U0001f600", "é", "\u2028", "\\", '"', "\x7f", "\ufeff"]
plain = st.text(st.characters(exclude_categories=()), max_size=20)  # surrogates included
text = plain | st.tuples(plain, st.sampled_from(SPECIAL), plain).map("".join)
numbers = (
    st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.builds(pow, st.just(2), st.just(14_001))  # past the integer limit, still printable
    | st.floats()
    | st.floats(min_value=1e15, max_value=1e300)
)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=30,
)
deep = st.integers(min_value=60, max_value=70).map(
    lambda depth: _nest(depth)  # around MAX_DEPTH, both sides of it
)
keys = text | st.text(st.characters(codec="utf-8"), min_size=170, max_size=600)  # near 512 bytes


def _nest(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = {"d": value}
    return value


_serial = itertools.count()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(key=keys, data=json_values | deep)
async def test_random_unicode_json_round_trips_exactly_or_is_refused_with_a_code(
    harness: Harness, key: str, data: Any
) -> None:
    key = f"{next(_serial)}:{key}"  # never a key an earlier example already holds
    before = len(await harness.driver.introspect.list_runs(RunFilter(limit=100_000)))
    try:
        result = await blob.enqueue({"key": key, "data": data})
    except FerryError as refused:
        event(refused.code)
        assert refused.code in REFUSALS, refused
        assert refused.fix
        after = len(await harness.driver.introspect.list_runs(RunFilter(limit=100_000)))
        assert after == before, "a refused input wrote a row"
        return
    event("stored")
    expected = {"key": key, "data": data, "tenant": None, "group": "g", "text": ""}
    assert result.deduplicated is False
    run = await harness.driver.introspect.get_run(result.job_id)
    assert run is not None
    assert run.idempotency_key == key
    assert run.payload == expected
    [claimed] = await harness.driver.claim(CLAIM)
    assert claimed.id == result.job_id and claimed.payload == expected
    assert await harness.driver.ack(claimed.id, AckOptions(worker_id=CLAIM.worker_id))
