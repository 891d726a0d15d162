"""The operator's liveness endpoint, served from the start (a standby is alive too).

Kopf's own endpoint only starts with Kopf, which a standby does not run; this one answers
``/healthz`` while the process's event loop turns, and says whether this replica leads.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web


async def serve_health(port: int, leading: Callable[[], bool]) -> web.AppRunner:
    """Serve ``GET /healthz`` on ``port``; the caller cleans the runner up."""

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"ok": True, "leader": leading()})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "0.0.0.0", port).start()
    return runner
