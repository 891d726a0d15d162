"""Every command runs on uvloop where it is installed, on asyncio's loop when asked, and a
loop that cannot be had is refused by name rather than silently swapped."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from importlib.util import find_spec

import pytest

from ferry import _event_loop as event_loop
from ferry.errors import FerryError


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_auto_runs_on_uvloop_when_it_is_installed() -> None:
    if find_spec("uvloop") is None:
        pytest.skip("uvloop is not installed here (the dev extra installs it)")
    assert event_loop.chosen_loop({}) == "uvloop"
    assert event_loop.run(_loop_module, {}) == "uvloop"
    assert event_loop.run(_loop_module, {"FERRY_EVENT_LOOP": "uvloop"}) == "uvloop"


def test_asyncio_is_chosen_by_name() -> None:
    assert event_loop.run(_loop_module, {"FERRY_EVENT_LOOP": "asyncio"}).startswith("asyncio")


def test_an_unknown_loop_is_refused() -> None:
    with pytest.raises(FerryError) as refused:
        event_loop.chosen_loop({"FERRY_EVENT_LOOP": "trio"})
    assert refused.value.code == "X_INVARIANT"
    assert "FERRY_EVENT_LOOP='trio'" in refused.value.message


def test_uvloop_asked_for_but_not_installed_is_refused_and_starts_nothing() -> None:
    # A process whose import system no longer finds installed packages (ferry itself is
    # imported before): what an environment without the uvloop extra sees.
    program = """
import sys
from importlib.machinery import PathFinder
from ferry import _event_loop as event_loop
from ferry.errors import FerryError
sys.meta_path[:] = [f for f in sys.meta_path if f is not PathFinder]
started = []
async def main():
    started.append(1)
try:
    event_loop.run(main, {"FERRY_EVENT_LOOP": "uvloop"})
except FerryError as refused:
    print(refused.code, refused.fix, started)
"""
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("X_EXTRA_MISSING pip install 'ferry[uvloop]'")
    assert out.rstrip().endswith("[]"), "nothing started"
