"""The pytest plugin: ``ferry_harness`` and ``ferry_clock`` fixtures.

``ferry_app`` (an ini option, or ``FERRY_APP``) names the application under test as
``ferry --app`` does (``my_app.jobs`` or ``my_app:api``): the harness's ``drain()`` then
fires that application's tasks without the test importing their modules.

The fixtures are plain (not async), so they work under pytest-asyncio in either mode; an
``async def`` test needs pytest-asyncio to run it: ``asyncio_mode = auto``, or
``@pytest.mark.asyncio`` on each test in strict mode. A test that uses the fixtures and
would not be run that way fails saying so, instead of pytest's bare complaint.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator

import pytest

from ferry._app import load_app
from ferry._clock import FrozenClock
from ferry.testing._harness import Harness

_FIXTURES = {"ferry_harness", "ferry_clock"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "ferry_app",
        "module[:api] of the application under test: ferry_harness.drain() fires its tasks",
        default=None,
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    function = getattr(item, "obj", None)
    if (
        function is not None
        and inspect.iscoroutinefunction(function)
        and _FIXTURES & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("asyncio") is None
    ):
        pytest.fail(
            f"{item.name} is an async test using ferry's fixtures, and nothing runs it: "
            "pytest-asyncio is in strict mode (or not installed). Set asyncio_mode = auto "
            "in the pytest configuration, or mark the test @pytest.mark.asyncio "
            "(pip install pytest-asyncio).",
            pytrace=False,
        )


@pytest.fixture
def ferry_harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    """A harness on the memory driver and a frozen clock, installed for this test; with
    ``ferry_app`` configured, ``drain()`` fires that application's tasks."""
    spec = request.config.getini("ferry_app") or os.environ.get("FERRY_APP")
    tasks = list(load_app(spec).tasks.values()) if spec else None
    harness = Harness(tasks=tasks)
    with harness.installed():
        yield harness


@pytest.fixture
def ferry_clock(ferry_harness: Harness) -> FrozenClock:
    """The harness's frozen clock: ``ferry_clock.advance("3d")`` is the only way time passes."""
    return ferry_harness.clock
