"""The abort signal a job body reads: ``ctx.signal`` and ``throw_if_aborted``.

One signal per execution, following the worker's own (drain) signal, so a timeout, a
drain, a lost lease or an operator's cancel all reach the body through the same seam.
The ``reason`` is a ``FerryError`` whose code is the verdict ``execute_job`` reads off
the signal afterwards — never off whatever the body raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from ferry.errors import FerryError


class AbortSignal:
    """A one-shot abort with a reason; children follow their parent."""

    def __init__(self, parent: AbortSignal | None = None) -> None:
        self._reason: FerryError | None = None
        self._event: asyncio.Event | None = None
        self._listeners: list[Callable[[FerryError], None]] = []
        if parent is not None:
            if parent.aborted and parent.reason is not None:
                self._reason = parent.reason
            else:
                parent.add_listener(self.abort)

    @property
    def aborted(self) -> bool:
        """True once ``abort`` was called (here or on a parent)."""
        return self._reason is not None

    @property
    def reason(self) -> FerryError | None:
        """Why it was aborted: ``reason.code`` is ``X_TIMEOUT``, ``X_DRAINING``, …"""
        return self._reason

    def abort(self, reason: FerryError) -> None:
        """Abort with ``reason``; later calls keep the first reason."""
        if self._reason is not None:
            return
        self._reason = reason
        if self._event is not None:
            self._event.set()
        for listener in self._listeners:
            listener(reason)
        self._listeners.clear()

    def add_listener(self, listener: Callable[[FerryError], None]) -> None:
        """Call ``listener(reason)`` when the signal aborts."""
        if self._reason is not None:
            listener(self._reason)
        else:
            self._listeners.append(listener)

    async def wait(self) -> FerryError:
        """Return the reason once the signal aborts."""
        if self._reason is None:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        assert self._reason is not None
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise the abort reason if the signal has aborted."""
        if self._reason is not None:
            raise self._reason


class _HasSignal(Protocol):
    @property
    def signal(self) -> AbortSignal: ...


def throw_if_aborted(ctx: _HasSignal | AbortSignal) -> None:
    """Raise the abort reason if ``ctx.signal`` (or the signal given) has aborted."""
    signal = ctx if isinstance(ctx, AbortSignal) else ctx.signal
    signal.throw_if_aborted()
