"""The jobs dashboard: a server-rendered Starlette app at ``/admin/jobs``.

Every page reads the driver's ``JobIntrospection`` (and the scheduler's store for task
state); every list is one bounded SQL page, never a table read into Python. Pages are
plain HTML forms with no script: state changes are POSTs carrying the session's CSRF
token, answered by a redirect back to the page with a notice.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ferry._admin.access import SESSION_COOKIE, SESSION_MAX_AGE_S, Access, Grant
from ferry._admin.filters import FILTER_WORDS, instant, run_filter
from ferry._admin.overview import queue_overview
from ferry._scheduler.status import task_status
from ferry.drivers.protocol import JOB_STATES, JobDriver, RunDetail
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle

PREFIX = "/admin"
_SECURITY_HEADERS = {
    # No script at all; inline styles only (the step timeline's widths).
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

Handler = Callable[[Request, Grant], Awaitable[Response]]


@dataclass
class Dashboard:
    """What the pages read from: the job driver (its scheduler store too) and the tasks."""

    driver: JobDriver
    access: Access
    tasks: Sequence[TaskHandle] = ()


def admin_app(
    driver: JobDriver,
    *,
    access: Access,
    tasks: Sequence[TaskHandle] = (),
) -> Starlette:
    """The dashboard as an ASGI app; mount it at the root (its paths start ``/admin``).

    Run-now fires ``task.enqueue()``, which enqueues through the ambient job driver: the
    caller sets it (``set_job_driver``) to the same ``driver``.
    """
    pages = _Pages(Dashboard(driver, access, tasks))
    read, manage = pages.guarded("job:read"), pages.guarded("job:manage")
    return Starlette(
        routes=[
            Route(PREFIX, pages.home),
            Route(f"{PREFIX}/login", pages.login, methods=["GET", "POST"]),
            Route(f"{PREFIX}/logout", pages.logout, methods=["POST"]),
            Route(f"{PREFIX}/jobs", read(pages.jobs)),
            Route(f"{PREFIX}/jobs/runs/{{run_id}}", read(pages.run)),
            Route(
                f"{PREFIX}/jobs/runs/{{run_id}}/{{action}}",
                manage(pages.run_action),
                methods=["POST"],
            ),
            Route(f"{PREFIX}/jobs/queues/{{action}}", manage(pages.queue_action), methods=["POST"]),
            Route(f"{PREFIX}/jobs/tasks", read(pages.tasks_page)),
            Route(f"{PREFIX}/jobs/tasks/{{action}}", manage(pages.task_action), methods=["POST"]),
        ]
    )


class _Pages:
    def __init__(self, dashboard: Dashboard) -> None:
        self.d = dashboard
        self.templates = Environment(
            loader=PackageLoader("ferry._admin", "templates"),
            autoescape=select_autoescape(default=True),
        )
        self.templates.filters["instant"] = instant
        self.templates.filters["pretty_json"] = lambda v: json.dumps(
            v, indent=2, ensure_ascii=False, default=str
        )

    # -- access ------------------------------------------------------------------------

    def guarded(
        self, permission: str
    ) -> Callable[[Handler], Callable[[Request], Awaitable[Response]]]:
        """Wrap a page: resolve the grant, demand ``permission``, check CSRF on POSTs."""

        def wrap(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                grant = self.d.access.resolve(
                    request.headers.get("authorization"), request.cookies.get(SESSION_COOKIE)
                )
                if grant is None:
                    if request.method == "GET":
                        return _secured(RedirectResponse(f"{PREFIX}/login", status_code=303))
                    return self._plain(401, "a job:read or job:manage token is required")
                if permission not in grant.permissions:
                    return self._plain(403, f"this token lacks the {permission} permission")
                if request.method == "POST":
                    form = await request.form()
                    submitted = form.get("csrf")
                    if not self.d.access.csrf_ok(
                        grant, submitted if isinstance(submitted, str) else None
                    ):
                        return self._plain(403, "the form's CSRF token does not match the session")
                response = await handler(request, grant)
                if grant.fresh:
                    self._set_session(response, grant)
                return _secured(response)

            return endpoint

        return wrap

    async def home(self, request: Request) -> Response:
        """``/admin`` leads to the jobs page."""
        return _secured(RedirectResponse(f"{PREFIX}/jobs", status_code=303))

    async def login(self, request: Request) -> Response:
        """The token form; a valid token becomes a signed session cookie."""
        error = None
        if request.method == "POST":
            form = await request.form()
            token = form.get("token")
            level = self.d.access.level_of(token) if isinstance(token, str) else None
            if level is not None:
                response = RedirectResponse(f"{PREFIX}/jobs", status_code=303)
                self._set_session(response, self.d.access.new_session(level))
                return _secured(response)
            error = "That token grants neither job:read nor job:manage."
        html = self.templates.get_template("login.html").render(error=error, prefix=PREFIX)
        return _secured(HTMLResponse(html, status_code=401 if error else 200))

    async def logout(self, request: Request) -> Response:
        """Drop the session cookie."""
        response = RedirectResponse(f"{PREFIX}/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path=PREFIX)
        return _secured(response)

    # -- pages -------------------------------------------------------------------------

    async def jobs(self, request: Request, grant: Grant) -> Response:
        """Queues with depth and throughput, and one page of runs under the filters."""
        words = {word: request.query_params.get(word) for word in FILTER_WORDS}
        driver = self.d.driver
        try:
            wanted = run_filter(words, now_ms=driver.clock.now_ms())
            runs = await driver.introspect.list_runs(wanted)
            error = request.query_params.get("error")
        except FerryError as refused:
            wanted, runs, error = None, [], f"{refused.code}: {refused.message}"
        older = None
        if wanted is not None and len(runs) == wanted.limit:
            older = urlencode({**{k: v for k, v in words.items() if v}, "before": runs[-1].id})
        return self._page(
            request,
            grant,
            "jobs.html",
            title="Jobs",
            queues=await queue_overview(driver),
            runs=runs,
            words={k: v or "" for k, v in words.items()},
            states=JOB_STATES,
            older=older,
            error=error,
        )

    async def run(self, request: Request, grant: Grant) -> Response:
        """One run: input, state, attempts, steps timeline, error, lease."""
        run_id = request.path_params["run_id"]
        detail = await self.d.driver.introspect.get_run(run_id)
        if detail is None:
            return self._page(
                request, grant, "missing.html", title="No such run", run_id=run_id, status=404
            )
        return self._page(
            request,
            grant,
            "run.html",
            title=f"Run {run_id}",
            run=detail,
            s=detail.summary,
            timeline=_timeline(detail),
            error=request.query_params.get("error"),
        )

    async def tasks_page(self, request: Request, grant: Grant) -> Response:
        """Every declared task: schedule, zone, last fire, next fire, paused."""
        store = self.d.driver.scheduler
        ticks = await store.ticks()
        paused = await store.paused_tasks()
        now = self.d.driver.clock.now_ms()
        rows = [
            task_status(
                task, ticks.get(task.name), paused=task.name in paused, now_ms=now, next_count=1
            )
            for task in self.d.tasks
        ]
        return self._page(
            request,
            grant,
            "tasks.html",
            title="Tasks",
            tasks=rows,
            has_store=store is not None,
            error=request.query_params.get("error"),
        )

    # -- actions -----------------------------------------------------------------------

    async def run_action(self, request: Request, grant: Grant) -> Response:
        """Retry or cancel one run, then back to its page with a notice or an error."""
        run_id, action = request.path_params["run_id"], request.path_params["action"]
        back = f"{PREFIX}/jobs/runs/{run_id}"
        introspect = self.d.driver.introspect
        try:
            if action == "retry":
                await introspect.retry_run(run_id)
                notice = f"Run {run_id} is queued again."
            elif action == "cancel":
                state = await introspect.cancel_run(run_id)
                notice = (
                    f"Cancel requested: run {run_id}'s worker aborts it at its next heartbeat."
                    if state == "running"
                    else f"Run {run_id} is cancelled."
                )
            else:
                return self._plain(404, f"no run action {action!r}")
        except FerryError as refused:
            return _back(back, error=f"{refused.code}: {refused.message}")
        return _back(back, notice=notice)

    async def queue_action(self, request: Request, grant: Grant) -> Response:
        """Pause or resume the queue named in the form."""
        action = request.path_params["action"]
        queue = (await request.form()).get("queue")
        if not isinstance(queue, str) or not queue or action not in ("pause", "resume"):
            return self._plain(400, "post queue=<name> to /queues/pause or /queues/resume")
        introspect = self.d.driver.introspect
        if action == "pause":
            await introspect.pause_queue(queue)
        else:
            await introspect.resume_queue(queue)
        return _back(f"{PREFIX}/jobs", notice=f'Queue "{queue}" is {action}d.')

    async def task_action(self, request: Request, grant: Grant) -> Response:
        """Run now, pause or resume the task named in the form."""
        action = request.path_params["action"]
        name = (await request.form()).get("name")
        back = f"{PREFIX}/jobs/tasks"
        task = next((t for t in self.d.tasks if t.name == name), None)
        if task is None:
            return _back(back, error=f'X_TASK_UNKNOWN: the application declares no task "{name}"')
        store = self.d.driver.scheduler
        try:
            if action == "run-now":
                fired = await task.enqueue()
                new = sum(1 for f in fired if not f["result"].deduplicated)
                notice = (
                    f'Task "{task.name}" fired {len(fired)} entr{"y" if len(fired) == 1 else "ies"}'
                    f" ({new} new run(s), {len(fired) - new} already enqueued)."
                )
            elif action in ("pause", "resume"):
                if action == "pause":
                    await store.pause_task(task.name, now_ms=self.d.driver.clock.now_ms())
                else:
                    await store.resume_task(task.name)
                notice = f'Task "{task.name}" is {action}d.'
            else:
                return self._plain(404, f"no task action {action!r} here")
        except FerryError as refused:
            return _back(back, error=f"{refused.code}: {refused.message}")
        return _back(back, notice=notice)

    # -- rendering ---------------------------------------------------------------------

    def _page(
        self, request: Request, grant: Grant, template: str, *, status: int = 200, **context: Any
    ) -> Response:
        html = self.templates.get_template(template).render(
            prefix=PREFIX,
            csrf=self.d.access.csrf_token(grant),
            can_manage="job:manage" in grant.permissions,
            session=grant.session is not None,
            notice=request.query_params.get("notice"),
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def _plain(self, status: int, message: str) -> Response:
        return _secured(
            HTMLResponse(
                self.templates.get_template("refused.html").render(
                    status=status, message=message, prefix=PREFIX
                ),
                status_code=status,
            )
        )

    def _set_session(self, response: Response, grant: Grant) -> None:
        response.set_cookie(
            SESSION_COOKIE,
            self.d.access.cookie_value(grant),
            max_age=SESSION_MAX_AGE_S,
            path=PREFIX,
            httponly=True,
            samesite="strict",
        )


@dataclass(frozen=True, slots=True)
class TimelineBar:
    """One step drawn on the run's timeline, as percentages of the whole span."""

    name: str
    kind: str
    offset_pct: float
    width_pct: float
    took_ms: int
    result: Any
    wake_at_ms: int | None


def _timeline(run: RunDetail) -> list[TimelineBar]:
    if not run.steps:
        return []
    start = min(step.started_at_ms for step in run.steps)
    end = max(step.finished_at_ms for step in run.steps)
    span = max(end - start, 1)
    return [
        TimelineBar(
            name=step.name,
            kind=step.kind,
            offset_pct=round((step.started_at_ms - start) * 100 / span, 2),
            width_pct=max(round((step.finished_at_ms - step.started_at_ms) * 100 / span, 2), 0.5),
            took_ms=step.finished_at_ms - step.started_at_ms,
            result=step.result,
            wake_at_ms=step.wake_at_ms,
        )
        for step in run.steps
    ]


def _back(path: str, *, notice: str | None = None, error: str | None = None) -> Response:
    query = urlencode({k: v for k, v in (("notice", notice), ("error", error)) if v})
    return _secured(RedirectResponse(f"{path}?{query}" if query else path, status_code=303))


def _secured(response: Response) -> Response:
    response.headers.update(_SECURITY_HEADERS)
    return response
