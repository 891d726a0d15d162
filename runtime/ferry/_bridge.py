"""From sync code into ferry's async core: what ``enqueue_sync`` and ``append_sync`` run on.

ferry's drivers are async, and a driver's pool belongs to the event loop it was opened
on. Sync code reaches them one of two ways:

* **through its own blocking connection** (psycopg, a SQLAlchemy ``Session``, Django's):
  the statement must run on the caller's thread, in the caller's transaction, so the
  driver's code is driven right here, with no event loop (it never suspends: each
  statement is a plain call on that connection); it touches no pool and nothing of any
  loop (``blocking_allowed`` tells the connection adapters so);
* **through the driver's own pool**: the call is handed to the loop the driver serves —
  the worker's, for a sync job body; the loop an async application last used the driver
  on (an ASGI app's, whose sync endpoints run in its thread pool); or, in a program with
  no event loop at all, a loop thread of ferry's own — and waited for here.

Called on a thread that is running an event loop, either way would block that loop (and
the second would deadlock it): refused with ``X_SYNC_ON_EVENT_LOOP``.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ferry.errors import FerryError

T = TypeVar("T")

_blocking = contextvars.ContextVar("ferry_blocking_allowed", default=False)
_home = threading.local()
_served: asyncio.AbstractEventLoop | None = None
_default_connection: Callable[[], Any] | None = None
_own_loop: asyncio.AbstractEventLoop | None = None
_own_loop_lock = threading.Lock()


def home_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop whose thread pool runs the current thread's work (``None`` elsewhere):
    where a sync job body's steps and enqueues are sent."""
    loop: asyncio.AbstractEventLoop | None = getattr(_home, "loop", None)
    return loop


def set_home_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Set by a pool thread around each piece of work it runs for ``loop``."""
    _home.loop = loop


def set_default_connection(provider: Callable[[], Any] | None) -> None:
    """Where sync code's transaction lives when it passes none: ``provider()`` answers the
    connection (``ferry.contrib.django`` answers Django's, so ``enqueue_sync`` joins
    ``transaction.atomic()`` without being told)."""
    global _default_connection
    _default_connection = provider


def default_connection(given: Any) -> Any:
    """``given``, or the default connection of sync code (``None``: the driver's own)."""
    if given is not None or _default_connection is None:
        return given
    return _default_connection()


def blocking_allowed() -> bool:
    """True while driver code runs for a sync caller on its own thread: a blocking
    connection's I/O may run here without stalling anybody's event loop."""
    return _blocking.get()


def serve(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Note that the application uses ferry's drivers on ``loop`` (default: the running
    one): where sync callers without a connection of their own are sent."""
    global _served
    if _blocking.get():  # a sync caller on its own thread: no loop to note
        return
    _served = loop or asyncio.get_running_loop()


def run_sync(call: Callable[[], Coroutine[Any, Any, T]], *, joined: bool, what: str) -> T:
    """Run ``call()`` for sync code and answer its result: on this thread when the caller
    ``joined`` its own (blocking) connection, else on the loop the drivers serve."""
    global _served
    _refuse_on_loop(what)
    if joined:
        return _on_this_thread(call)
    loop = home_loop() or _served
    if loop is None or loop.is_closed() or not loop.is_running():
        loop = _served = _ferry_loop()
    return asyncio.run_coroutine_threadsafe(call(), loop).result()


def _refuse_on_loop(what: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise FerryError(
        "X_SYNC_ON_EVENT_LOOP",
        f"{what} was called on a thread that runs an event loop, which it would block",
        "await the async form there (await job.enqueue(...), await driver.outbox.append(...)); "
        "the sync form is for sync code and the threads a loop runs it on",
    )


def _on_this_thread(call: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Drive ``call()`` to its end right here, with no event loop at all.

    With a blocking connection the driver's code never suspends — every statement is a
    plain call on the caller's connection — so one ``send`` runs it to completion. No loop
    may run: Django refuses its connections to any thread with a running loop."""
    coroutine = call()
    token = _blocking.set(True)
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return finished.value  # type: ignore[no-any-return]
    finally:
        _blocking.reset(token)
    coroutine.close()
    raise RuntimeError("ferry's path for a blocking connection awaited something that waits")


def _ferry_loop() -> asyncio.AbstractEventLoop:
    """A loop on a daemon thread of ferry's own, for a process with none of its own."""
    global _own_loop
    with _own_loop_lock:
        if _own_loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="ferry-loop", daemon=True).start()
            _own_loop = loop
        return _own_loop
