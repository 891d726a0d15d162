"""The event loop every ``ferry`` command runs on: uvloop where it is installed.

A worker spends most of its own CPU in the event loop's machinery (a task, its steps and a
few callbacks per run); uvloop does that work in C. ``ferry[uvloop]`` installs it (the
runtime image does), and ferry behaves the same on either loop: the test suite runs on
each (``FERRY_EVENT_LOOP`` picks the loop of the tests too).

``FERRY_EVENT_LOOP``: ``auto`` (the default: uvloop if installed, else asyncio's own),
``uvloop`` (refused with ``X_EXTRA_MISSING`` when it is not installed, rather than
silently slower) or ``asyncio``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from ferry._extras import extra_missing
from ferry.errors import FerryError

T = TypeVar("T")

ENV = "FERRY_EVENT_LOOP"


def chosen_loop(environ: dict[str, str] | None = None) -> Literal["uvloop", "asyncio"]:
    """Which loop ``FERRY_EVENT_LOOP`` (in ``environ``, default the process's) asks for."""
    value = (os.environ if environ is None else environ).get(ENV, "auto").strip() or "auto"
    installed = importlib.util.find_spec("uvloop") is not None
    if value == "asyncio":
        return "asyncio"
    if value == "auto":
        return "uvloop" if installed else "asyncio"
    if value == "uvloop":
        if not installed:
            raise extra_missing("uvloop", feature=f"{ENV}=uvloop", module="uvloop")
        return "uvloop"
    raise FerryError(
        "X_INVARIANT",
        f"{ENV}={value!r} names no event loop",
        f"set {ENV} to auto, uvloop or asyncio (or unset it)",
    )


def loop_factory(environ: dict[str, str] | None = None) -> Callable[[], asyncio.AbstractEventLoop]:
    """A factory of the chosen loop (for ``asyncio.Runner``)."""
    if chosen_loop(environ) == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def run(main: Callable[[], Coroutine[Any, Any, T]], environ: dict[str, str] | None = None) -> T:
    """``asyncio.run(main())`` on the chosen loop (a refused choice starts nothing)."""
    with asyncio.Runner(loop_factory=loop_factory(environ)) as runner:
        return runner.run(main())
