"""The pytest plugin: ``ferry_harness`` and ``ferry_clock`` fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ferry._clock import FrozenClock
from ferry.testing._harness import Harness


@pytest.fixture
def ferry_harness() -> Iterator[Harness]:
    """A harness on the memory driver and a frozen clock, installed for this test."""
    harness = Harness()
    with harness.installed():
        yield harness


@pytest.fixture
def ferry_clock(ferry_harness: Harness) -> FrozenClock:
    """The harness's frozen clock: ``ferry_clock.advance("3d")`` is the only way time passes."""
    return ferry_harness.clock
