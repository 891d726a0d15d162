"""The JSON payload rules, durations and the frozen clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import Enum, StrEnum
from uuid import UUID

import pytest
from support.waiting import blocked_in

from ferry import FerryError
from ferry._clock import FrozenClock
from ferry._duration import to_ms
from ferry._payload import to_json


class Colour(Enum):
    RED = "red"


def test_canonical_scalars_are_written_in_their_json_form() -> None:
    value = {
        "id": UUID("12345678-1234-5678-1234-567812345678"),
        "at": datetime(2026, 3, 8, 7, 0, tzinfo=UTC),
        "amount": Decimal("1.50"),
        "colour": Colour.RED,
        "pair": (1, 2),
    }
    assert to_json(value, what="input") == {
        "id": "12345678-1234-5678-1234-567812345678",
        "at": "2026-03-08T07:00:00Z",
        "amount": "1.50",
        "colour": "red",
        "pair": [1, 2],
    }


class Size(str, Enum):  # noqa: UP042 — the mixin whose str() is "Size.LARGE", not its text
    LARGE = "large"


class Shade(StrEnum):
    DARK = "dark"


def test_string_enums_are_written_as_their_text_as_keys_and_values() -> None:
    value = {Size.LARGE: [Size.LARGE], Shade.DARK: Shade.DARK}
    assert to_json(value, what="input") == {"large": ["large"], "dark": "dark"}


def test_a_mapping_with_a_non_string_key_is_refused() -> None:
    with pytest.raises(FerryError) as refused:
        to_json({"counts": {1: "one"}}, what="input")
    assert refused.value.code == "X_PAYLOAD_NOT_JSON"
    assert "input.counts[1]" in refused.value.message


def test_shared_but_not_circular_structures_are_fine() -> None:
    shared = [1]
    assert to_json({"a": shared, "b": shared}, what="input") == {"a": [1], "b": [1]}


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("250ms", 250),
        ("30s", 30_000),
        ("1h30m", 5_400_000),
        ("3d", 259_200_000),
        (1.5, 1_500),
        (timedelta(minutes=2), 120_000),
    ],
)
def test_durations_read_as_people_write_them(text: object, ms: int) -> None:
    assert to_ms(text) == ms  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "3 days", "-1s", "1x", True, float("nan")])
def test_bad_durations_are_refused(bad: object) -> None:
    with pytest.raises(FerryError) as refused:
        to_ms(bad, what="delay")  # type: ignore[arg-type]
    assert refused.value.code == "X_INVARIANT" and "delay" in refused.value.message


async def test_the_frozen_clock_wakes_sleepers_only_when_advanced_past_them() -> None:
    clock = FrozenClock(start_ms=0)
    woke: list[str] = []

    async def sleeper(name: str, ms: int) -> None:
        await clock.sleep_ms(ms)
        woke.append(name)

    late = asyncio.create_task(sleeper("late", 2_000))
    soon = asyncio.create_task(sleeper("soon", 1_000))
    for task in (late, soon):
        await blocked_in(task, "FrozenClock.sleep_ms")
    assert clock.next_deadline_ms() == 1_000
    clock.advance("1s")
    await blocked_in(late, "FrozenClock.sleep_ms")  # not woken: its instant has not come
    await soon
    assert woke == ["soon"]
    clock.advance("1s")
    await late
    assert woke == ["soon", "late"] and clock.now_ms() == 2_000
