"""The abort signal a job body reads: ``ctx.signal`` and ``throw_if_aborted``.

One signal per execution, following the worker's own (drain) signal, so a timeout, a
drain, a lost lease or an operator's cancel all reach the body through the same seam.
The ``reason`` is a ``FerryError`` whose code is the verdict ``execute_job`` reads off
the signal afterwards — never off whatever the body raised.

A run's signal follows the worker's for as long as the run lasts and no longer:
``detach()`` takes its listener off the parent when the run ends. A worker lives for
weeks and runs millions of attempts; a listener left behind per run is a leak.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Protocol

from ferry.errors import FerryError

logger = logging.getLogger("ferry.jobs")

Listener = Callable[[FerryError], None]


class AbortSignal:
    """A one-shot abort with a reason; a child follows its parent until ``detach()``."""

    __slots__ = ("_blocking", "_event", "_listeners", "_parent", "_reason")

    def __init__(self, parent: AbortSignal | None = None) -> None:
        self._reason: FerryError | None = None
        self._event: asyncio.Event | None = None
        self._blocking: threading.Event | None = None
        # Ordered, with O(1) removal: a worker's signal has a listener per running run.
        self._listeners: dict[Listener, None] = {}
        self._parent: AbortSignal | None = None
        if parent is not None:
            if parent.reason is not None:
                self._reason = parent.reason
            else:
                parent.add_listener(self.abort)
                self._parent = parent

    @property
    def aborted(self) -> bool:
        """True once ``abort`` was called (here or on a parent)."""
        return self._reason is not None

    @property
    def reason(self) -> FerryError | None:
        """Why it was aborted: ``reason.code`` is ``X_TIMEOUT``, ``X_DRAINING``, …"""
        return self._reason

    @property
    def listener_count(self) -> int:
        """How many listeners (children included) wait for this signal to abort."""
        return len(self._listeners)

    def abort(self, reason: FerryError) -> None:
        """Abort with ``reason``; later calls keep the first reason.

        The abort comes from the runtime (a timeout's timer, the lease keeper, a drain), so
        a listener that raises is logged (``jobs.signal.listener-failed``) and the others
        still hear it; it never breaks the timer or the keeper that aborted."""
        if self._reason is not None:
            return
        self._reason = reason
        self._parent = None  # the parent clears its listeners when it aborts; nothing to undo
        if self._event is not None:
            self._event.set()
        if self._blocking is not None:
            self._blocking.set()
        listeners, self._listeners = self._listeners, {}
        for listener in listeners:
            try:
                listener(reason)
            except Exception:
                logger.exception("jobs.signal.listener-failed", extra={"code": reason.code})

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(reason)`` when the signal aborts (at once if it already has);
        a listener added twice is called once."""
        if self._reason is not None:
            listener(self._reason)
        else:
            self._listeners[listener] = None

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener`` (a no-op when it is not listening)."""
        self._listeners.pop(listener, None)

    def detach(self) -> None:
        """Stop following the parent: the run this signal belongs to has ended."""
        parent, self._parent = self._parent, None
        if parent is not None:
            parent.remove_listener(self.abort)

    async def wait(self) -> FerryError:
        """Return the reason once the signal aborts."""
        if self._reason is None:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        assert self._reason is not None
        return self._reason

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """Block this thread until the signal aborts or ``timeout`` seconds pass; answers
        whether it aborted. For a sync body on its thread (never on the event loop): an
        interruptible pause, e.g. ``while not ctx.signal.wait_blocking(5): poll()``."""
        if self._blocking is None:
            # Published before the reason is read again: an abort on the loop either sees
            # this event or happened before the read below.
            self._blocking = threading.Event()
        if self._reason is not None:
            return True
        return self._blocking.wait(timeout)

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
