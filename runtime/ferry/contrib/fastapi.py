"""ferry in a FastAPI (or any Starlette) application (docs/integrations.md).

* ``ferry_lifespan(driver)``: the app's lifespan opens the driver (migrating it), makes it
  the job driver, and closes it at shutdown; sync endpoints' ``enqueue_sync`` calls reach
  it on the app's loop.
* ``transaction(source)``: a dependency yielding a connection (or session) inside a
  transaction of the application's own database; ``await job.enqueue(...,
  connection=conn)`` joins it, and it commits when the endpoint returns (rolls back when
  it raises): commit is the enqueue.
* ``dashboard(driver, authorize=...)``: the jobs dashboard as a sub-application behind the
  application's own auth, mounted at ``/admin``.

It needs nothing beyond Starlette (which FastAPI is built on); ``dashboard`` needs the
``ferry[dashboard]`` extra (refused by name, ``X_EXTRA_MISSING``, without it).
"""

from __future__ import annotations

import inspect
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ferry._bridge import serve
from ferry._jobs.facade import set_job_driver
from ferry.drivers.protocol import JobDriver
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle

Level = Literal["read", "manage"]
Authorize = Callable[[Request], Awaitable[Level | None] | Level | None]


def ferry_lifespan(
    driver: JobDriver,
    *,
    then: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None,
) -> Callable[[Any], AbstractAsyncContextManager[Any]]:
    """A lifespan for ``FastAPI(lifespan=...)``: ``driver`` opened and installed for the
    app's life, closed after; ``then`` is the app's own lifespan, run inside it."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        previous = set_job_driver(driver)
        try:
            await driver.open()
            serve()  # sync endpoints run in the app's thread pool: their enqueues come here
            if then is None:
                yield None
            else:
                async with then(app) as state:
                    yield state
        finally:
            await driver.close()
            set_job_driver(previous)

    return lifespan


def transaction(source: Any) -> Callable[[], AsyncIterator[Any]]:
    """A dependency: a connection of ``source`` inside a transaction, committed when the
    endpoint returns and rolled back when it raises.

    ``source`` is the application's own: an asyncpg ``Pool`` (yields a connection) or a
    SQLAlchemy ``async_sessionmaker`` (yields an ``AsyncSession`` in ``session.begin()``,
    over asyncpg or psycopg)."""
    opener = _opener(source)

    async def dependency() -> AsyncIterator[Any]:
        async with opener() as connection:
            yield connection

    return dependency


def _opener(source: Any) -> Callable[[], AbstractAsyncContextManager[Any]]:
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is not None and isinstance(source, asyncpg.Pool):

        @asynccontextmanager
        async def asyncpg_transaction() -> AsyncIterator[Any]:
            async with source.acquire() as connection, connection.transaction():
                yield connection

        return asyncpg_transaction
    if "sqlalchemy" in sys.modules:
        from sqlalchemy.ext.asyncio import async_sessionmaker

        if isinstance(source, async_sessionmaker):

            @asynccontextmanager
            async def session_transaction() -> AsyncIterator[Any]:
                async with source() as session, session.begin():
                    yield session

            return session_transaction
    raise FerryError(
        "X_INVARIANT",
        f"transaction() was given a {type(source).__module__}.{type(source).__qualname__}, "
        "which it cannot open transactions on",
        "pass the application's asyncpg Pool or SQLAlchemy async_sessionmaker",
    )


def dashboard(
    driver: JobDriver, *, authorize: Authorize, tasks: Sequence[TaskHandle] = ()
) -> ASGIApp:
    """The jobs dashboard behind the application's own auth: mount it at ``/admin``
    (``app.mount("/admin", dashboard(driver, authorize=...))``).

    ``authorize(request)`` (sync or async) answers ``"manage"``, ``"read"`` or ``None``
    (refused, 403) for every request, from the application's own session or user. The
    dashboard's tokens are then an internal matter: made up here, never shown to anyone.
    Because the app's auth is usually a cookie, a POST (an action) must come from the
    dashboard's own pages — same origin — or it is refused (CSRF)."""
    from ferry.admin import Access, admin_app  # ferry[dashboard], asked for only here

    tokens: dict[Level, str] = {
        "read": secrets.token_urlsafe(32),
        "manage": secrets.token_urlsafe(32),
    }
    inner = admin_app(
        driver,
        access=Access(read_tokens=[tokens["read"]], manage_tokens=[tokens["manage"]]),
        tasks=tasks,
    )

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        request = Request(scope, receive)
        level = authorize(request)
        if inspect.isawaitable(level):
            level = await level
        refusal = _refusal(request, level)
        if refusal is not None:
            await PlainTextResponse(refusal, status_code=403)(scope, receive, send)
            return
        assert level is not None
        headers = [(k, v) for k, v in scope["headers"] if k != b"authorization"]
        headers.append((b"authorization", f"Bearer {tokens[level]}".encode()))
        # The dashboard's routes carry their /admin prefix: hand it the path from the root.
        root_path = str(scope.get("root_path", ""))
        if root_path.endswith("/admin"):
            root_path = root_path[: -len("/admin")]
        await inner({**scope, "headers": headers, "root_path": root_path}, receive, send)

    return app


def _refusal(request: Request, level: object) -> str | None:
    if level not in ("read", "manage"):
        return "the application's auth does not allow this dashboard"
    if request.method == "POST":
        fetched_from = request.headers.get("sec-fetch-site")
        origin = request.headers.get("origin")
        own = f"{request.url.scheme}://{request.url.netloc}"
        if fetched_from != "same-origin" and origin != own:
            return "a dashboard action must come from the dashboard's own pages"
    return None
