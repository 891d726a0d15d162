"""The scheduler tests run ``ferry scheduler`` processes on the real clock: the shared
``driver`` (which migrates the schema the processes and rows share) is on it too."""

from __future__ import annotations

import pytest

from ferry._clock import Clock, SystemClock


@pytest.fixture
def clock() -> Clock:
    return SystemClock()
