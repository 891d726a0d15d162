"""The jobs dashboard: a server-rendered Starlette app at ``/admin/jobs``.

Every page reads the driver's ``JobIntrospection`` through ``ferry._operations`` —
the same functions as ``ferry jobs`` and ``ferry mcp`` — and the scheduler's store for task
state; every list is one bounded SQL page, never a table read into Python. Pages are
plain HTML forms: state changes are POSTs carrying the session's CSRF token, answered by a
redirect back to the page with a banner *key* (see ``banners``). The one script, served
from here, only pauses the auto-refresh; without it the page refreshes by a ``<noscript>``
meta tag and pauses by a link.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

import ferry._operations as operations
from ferry._admin.banners import error_key, error_text, notice_text
from ferry._admin.charts import format_ms, read_charts
from ferry._admin.sessions import Sessions
from ferry._bounds import run_id as parse_run_id
from ferry._operations import bulk
from ferry._operations.access import SESSION_COOKIE, SESSION_MAX_AGE_S, Access, Grant
from ferry._operations.envelope import iso_instant
from ferry._operations.filters import FILTER_WORDS, MAX_PAGE, instant
from ferry._operations.queues import queue_overview
from ferry._operations.runs import WAITING_STATES
from ferry._operations.throttle import TokenThrottle
from ferry._printable import printable
from ferry._storable import quoted
from ferry._tracecontext import trace_id_of
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.drivers.protocol import JOB_STATES, JobDriver, RunDetail
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle

logger = logging.getLogger("ferry.admin")

PREFIX = "/admin"
SHOWN_INPUT_CHARS = 64_000
"""A run page shows this much of a run's input; the rest is a download, so a 50 MB payload
renders in bounded time and the page stays small."""
DEAD_PAGE = 100
"""Dead runs a dead-letter page lists (and a bulk retry can select) at once."""
REFRESH_S = 10
"""How often the jobs and dead-letter pages reload themselves unless paused."""
_REFRESH_SCRIPT = resources.files("ferry._admin").joinpath("static/refresh.js").read_bytes()
_TIMES_SCRIPT = resources.files("ferry._admin").joinpath("static/times.js").read_bytes()
VIEW_TABS = (
    ("scheduled", "Scheduled"),
    ("retrying", "Retrying"),
    ("sleeping", "Sleeping"),
    ("dead", "Dead"),
)
"""The run list's tabs (``ferry._operations.filters`` says what each view holds)."""
_SECURITY_HEADERS = {
    # One script, our own (the refresh pause); inline styles only (the timeline's widths).
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; "
    "style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

Handler = Callable[[Request, Grant], Awaitable[Response]]


@dataclass
class Dashboard:
    """What the pages read from: the job driver (its introspection, records and leases)
    and the tasks."""

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
            Route(f"{PREFIX}/static/refresh.js", pages.refresh_script),
            Route(f"{PREFIX}/static/times.js", pages.times_script),
            Route(f"{PREFIX}/jobs/workers", read(pages.workers)),
            Route(f"{PREFIX}/jobs/bulk", manage(pages.bulk_preview)),
            Route(f"{PREFIX}/jobs/bulk/{{action}}", manage(pages.bulk_apply), methods=["POST"]),
            Route(f"{PREFIX}/jobs", read(pages.jobs)),
            Route(f"{PREFIX}/jobs/dead", read(pages.dead)),
            Route(f"{PREFIX}/jobs/dead/retry", manage(pages.dead_retry), methods=["POST"]),
            Route(f"{PREFIX}/jobs/runs/{{run_id}}", read(pages.run)),
            Route(f"{PREFIX}/jobs/runs/{{run_id}}/input.json", read(pages.run_input)),
            Route(f"{PREFIX}/jobs/runs/{{run_id}}/result.json", read(pages.run_result)),
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
        self.throttle = TokenThrottle(dashboard.driver.clock)
        """One count per address for wrong tokens, typed in the form or sent as bearer."""
        # Asked for here, when the app is built: a driver lacking one refuses at start.
        self.introspect = need(dashboard.driver, INTROSPECT, by="the dashboard")
        self.sessions = Sessions(dashboard.driver)
        self.templates = Environment(
            loader=PackageLoader("ferry._admin", "templates"),
            autoescape=select_autoescape(default=True),
        )
        self.templates.filters["instant"] = instant
        self.templates.filters["iso"] = iso_instant
        self.templates.filters["printable"] = lambda text: printable(text, lines=True)
        self.templates.filters["duration"] = format_ms

    # -- access ------------------------------------------------------------------------

    def guarded(
        self, permission: str
    ) -> Callable[[Handler], Callable[[Request], Awaitable[Response]]]:
        """Wrap a page: resolve the grant, demand ``permission``, check CSRF on POSTs."""

        def wrap(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                authorization = request.headers.get("authorization")
                if authorization is not None:
                    client = _client(request)
                    wait_s = self.throttle.retry_after_s(client)
                    if wait_s:
                        return self._throttled(wait_s)
                    if self.d.access.bearer_level(authorization) is None:
                        self.throttle.failed(client, event="admin.bearer")
                grant = await self._grant(request)
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
                    self._set_session(request, response, grant)
                return _secured(response)

            return endpoint

        return wrap

    async def _grant(self, request: Request) -> Grant | None:
        """The request's grant, unless its session was signed out (checked in storage, so
        a sign-out on one replica holds on every replica at once)."""
        access = self.d.access
        grant = access.resolve(
            request.headers.get("authorization"), request.cookies.get(SESSION_COOKIE)
        )
        if grant is None or grant.session is None or grant.fresh:
            return grant
        if await self.sessions.revoked(grant.session):
            return access.new_session("manage", fresh=True) if access.insecure_dev else None
        return grant

    async def home(self, request: Request) -> Response:
        """``/admin`` leads to the jobs page."""
        return _secured(RedirectResponse(f"{PREFIX}/jobs", status_code=303))

    async def login(self, request: Request) -> Response:
        """The token form; a valid token becomes a signed session cookie. Failures are
        logged and, past a few from one address, answered 429 for a while."""
        error, status = None, 200
        if request.method == "POST":
            access = self.d.access
            client = _client(request)
            wait_s = self.throttle.retry_after_s(client)
            if wait_s:
                error = f"Too many failed sign-ins from your address: try again in {wait_s} s."
                html = self.templates.get_template("login.html").render(error=error, prefix=PREFIX)
                response = _secured(HTMLResponse(html, status_code=429))
                response.headers["Retry-After"] = str(wait_s)
                return response
            form = await request.form()
            token = form.get("token")
            level = access.level_of(token) if isinstance(token, str) else None
            if level is not None:
                self.throttle.succeeded(client)
                response = RedirectResponse(f"{PREFIX}/jobs", status_code=303)
                self._set_session(request, response, access.new_session(level))
                return _secured(response)
            self.throttle.failed(client, event="admin.signin")
            error, status = "That token grants neither job:read nor job:manage.", 401
        html = self.templates.get_template("login.html").render(error=error, prefix=PREFIX)
        return _secured(HTMLResponse(html, status_code=status))

    async def logout(self, request: Request) -> Response:
        """Revoke the session in storage (a copy of its cookie stops working at once, on
        every replica) and drop the cookie."""
        grant = self.d.access.session_of(request.cookies.get(SESSION_COOKIE))
        if grant is not None and grant.session is not None:
            await self.sessions.revoke(grant.session, until_ms=grant.expires_at_ms)
        response = RedirectResponse(f"{PREFIX}/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path=PREFIX)
        return _secured(response)

    async def refresh_script(self, request: Request) -> Response:
        """The auto-refresh pause button's script."""
        return _script(_REFRESH_SCRIPT)

    async def times_script(self, request: Request) -> Response:
        """The script that shows instants in the browser's own zone."""
        return _script(_TIMES_SCRIPT)

    # -- pages -------------------------------------------------------------------------

    async def jobs(self, request: Request, grant: Grant) -> Response:
        """Queues with depth, throughput and an hour's chart, the latency of recent runs,
        and one page of runs under the filters (a bad filter: 400 naming the word)."""
        words = {word: request.query_params.get(word) for word in FILTER_WORDS}
        driver = self.d.driver
        queues = await queue_overview(driver)
        chosen = {k: v for k, v in words.items() if v and k not in ("before", "limit")}
        tabs = {
            view: urlencode({**{k: v for k, v in chosen.items() if k != "view"}, "view": view})
            for view, _ in VIEW_TABS
        }
        tabs[""] = urlencode({k: v for k, v in chosen.items() if k != "view"})
        return self._page(
            request,
            grant,
            "jobs.html",
            title="Jobs",
            queues=queues,
            charts=await read_charts(driver, [q.queue for q in queues]),
            states=JOB_STATES,
            views=VIEW_TABS,
            tab_query=tabs,
            filtered=bool(chosen),
            bulk_query=urlencode(chosen),
            waiting=WAITING_STATES,
            refresh=True,
            **await self._runs(words),
        )

    async def workers(self, request: Request, grant: Grant) -> Response:
        """Every live worker process: what it serves, its last heartbeat, the runs it holds."""
        return self._page(
            request,
            grant,
            "workers.html",
            title="Workers",
            refresh=True,
            workers=await operations.list_workers(self.d.driver),
        )

    async def dead(self, request: Request, grant: Grant) -> Response:
        """The dead letters: dead runs, newest first, to inspect and retry in bulk."""
        words = {word: request.query_params.get(word) for word in ("queue", "job", "before")}
        fixed = {"state": "dead", "limit": str(DEAD_PAGE)}
        return self._page(
            request,
            grant,
            "dead.html",
            title="Dead letters",
            refresh=True,
            **await self._runs(words, fixed),
        )

    async def _runs(
        self, words: dict[str, str | None], fixed: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """One page of runs under the page's filter words (and ``fixed`` ones), with the
        link to the older page; a filter no run can match is a 400 naming the word."""
        try:
            page = await operations.list_runs(self.d.driver, {**words, **(fixed or {})})
        except FerryError as refused:
            error = f"{refused.code}: {refused.message}"
            return {
                "runs": [],
                "words": _shown(words),
                "older": None,
                "error": error,
                "status": 400,
            }
        older = None
        if page.next_before_id is not None:
            kept = {k: v for k, v in words.items() if v and k != "before"}
            older = urlencode({**kept, "before": page.next_before_id})
        return {
            "runs": page.runs,
            "words": _shown(words),
            "older": older,
            "searched_below": page.searched_below_id,
        }

    async def run(self, request: Request, grant: Grant) -> Response:
        """One run: input, state, attempts, steps timeline, error, lease."""
        try:
            detail = await operations.show_run(self.d.driver, request.path_params["run_id"])
        except FerryError as refused:
            if refused.code != "X_RUN_NOT_FOUND":
                return self._plain(400, f"{refused.code}: {refused.message}")
            run_id = request.path_params["run_id"]
            return self._page(
                request, grant, "missing.html", title="No such run", run_id=run_id, status=404
            )
        run_id = detail.summary.id
        shown, truncated = _bounded_json(detail.payload, SHOWN_INPUT_CHARS)
        result, result_truncated = _bounded_json(detail.result, SHOWN_INPUT_CHARS)
        timeline = _timeline(detail)
        progress = detail.progress
        return self._page(
            request,
            grant,
            "run.html",
            title=f"Run {run_id}",
            run=detail,
            s=detail.summary,
            timeline=timeline,
            span_ms=_span_ms(detail),
            progress_pct=min(max(progress.current * 100 / progress.total, 0), 100)
            if progress is not None and progress.total > 0
            else 0,
            trace_id=trace_id_of(detail.traceparent),
            waiting=operations.waiting_for(detail),
            input_text=shown,
            input_truncated=truncated,
            result_text=result,
            result_truncated=result_truncated,
        )

    async def run_input(self, request: Request, grant: Grant) -> Response:
        """A run's whole input as a JSON download (what a truncated page links to)."""
        return await self._download(request, "input", lambda run: run.payload)

    async def run_result(self, request: Request, grant: Grant) -> Response:
        """A run's whole result as a JSON download (what a truncated page links to)."""
        return await self._download(request, "result", lambda run: run.result)

    async def _download(
        self, request: Request, what: str, value: Callable[[RunDetail], Any]
    ) -> Response:
        try:
            detail = await operations.show_run(self.d.driver, request.path_params["run_id"])
        except FerryError as refused:
            status = 404 if refused.code == "X_RUN_NOT_FOUND" else 400
            return self._plain(status, f"{refused.code}: {refused.message}")
        run_id = detail.summary.id
        body = json.dumps(value(detail), ensure_ascii=False, default=str).encode()
        response = Response(body, media_type="application/json")
        response.headers["Content-Disposition"] = f'attachment; filename="run-{run_id}-{what}.json"'
        return response

    async def tasks_page(self, request: Request, grant: Grant) -> Response:
        """Every declared task: schedule, zone, last fire, next fire, paused."""
        rows = await operations.task_statuses(
            self.d.tasks, self.d.driver, now_ms=self.d.driver.clock.now_ms()
        )
        return self._page(
            request,
            grant,
            "tasks.html",
            title="Tasks",
            tasks=[
                {**row, "describe": task.describe_schedule()}
                for row, task in zip(rows, self.d.tasks, strict=True)
            ],
        )

    # -- actions -----------------------------------------------------------------------

    async def run_action(self, request: Request, grant: Grant) -> Response:
        """Retry or cancel one run, then back to its page with a banner."""
        action = request.path_params["action"]
        actions = {"retry": operations.retry_run, "cancel": operations.cancel_run}
        if action not in actions:
            return self._plain(404, f"no run action {quoted(action)}")
        try:
            run_id = parse_run_id(request.path_params["run_id"])
        except FerryError as refused:
            return self._plain(400, f"{refused.code}: {refused.message}")
        back = f"{PREFIX}/jobs/runs/{run_id}"
        try:
            done = await actions[action](self.d.driver, run_id)
        except FerryError as refused:
            return _back(back, error=error_key(refused))
        return _back(back, notice=done.notice)

    async def dead_retry(self, request: Request, grant: Grant) -> Response:
        """Retry every selected dead run (at most one page of them) and say how it went."""
        form = await request.form()
        ids = [value for value in form.getlist("run") if isinstance(value, str)][:MAX_PAGE]
        back = f"{PREFIX}/jobs/dead"
        if not ids:
            return _back(back, notice="dead-none-selected")
        refused = 0
        for run_id in ids:
            try:
                await operations.retry_run(self.d.driver, run_id)
            except FerryError:  # retried or pruned since the page was drawn
                refused += 1
        logger.info("admin.dead.retried", extra={"runs": len(ids) - refused, "refused": refused})
        if refused:
            return _back(back, error="dead-retry-partial")
        return _back(back, notice="dead-retried")

    async def bulk_preview(self, request: Request, grant: Grant) -> Response:
        """How many runs a bulk action would change under the filter, and the form that
        confirms exactly them (a malformed filter: 400 naming the word)."""
        params = request.query_params
        words = {word: params.get(word) for word in FILTER_WORDS}
        try:
            action = bulk.bulk_action(params.get("action") or "")
            selection = await bulk.preview(self.d.driver, action, words)
        except FerryError as refused:
            return self._plain(400, f"{refused.code}: {refused.message}")
        chosen = [(k, v) for k, v in words.items() if v and k not in ("before", "limit")]
        return self._page(
            request,
            grant,
            "bulk.html",
            title="Bulk action",
            selection=selection,
            verb=action,
            done=bulk.DONE[action],
            applies=", ".join(sorted(bulk.APPLIES[action])),
            sample=bulk.SAMPLE,
            shown_words=chosen,
            hidden_words=chosen,
            back_query=urlencode(chosen),
        )

    async def bulk_apply(self, request: Request, grant: Grant) -> Response:
        """Act on exactly the runs the preview showed (CSRF-checked like every POST), then
        back to the list with a banner; a selection that changed meanwhile changes nothing
        and shows the new preview."""
        form = await request.form()
        words = {word: _text(form.get(word)) for word in FILTER_WORDS}
        chosen = {k: v for k, v in words.items() if v and k not in ("before", "limit")}
        try:
            action = bulk.bulk_action(request.path_params["action"])
            done = await bulk.apply(
                self.d.driver, action, words, _text(form.get("selection")) or ""
            )
        except FerryError as refused:
            if refused.code == "X_SELECTION_CHANGED":
                again = urlencode({**chosen, "action": request.path_params["action"]})
                return _back(f"{PREFIX}/jobs/bulk?{again}", error=refused.code)
            return self._plain(400, f"{refused.code}: {refused.message}")
        logger.info("admin.bulk.done", extra={"action": action, **done.data})
        listed = f"{PREFIX}/jobs" + (f"?{urlencode(chosen)}" if chosen else "")
        return _back(listed, notice=done.notice)

    async def queue_action(self, request: Request, grant: Grant) -> Response:
        """Pause or resume the queue named in the form."""
        action = request.path_params["action"]
        queue = (await request.form()).get("queue")
        if not isinstance(queue, str) or action not in ("pause", "resume"):
            return self._plain(400, "post queue=<name> to /queues/pause or /queues/resume")
        try:
            done = await operations.set_queue_paused(self.d.driver, queue, paused=action == "pause")
        except FerryError as refused:
            return self._plain(400, f"{refused.code}: {refused.message}")
        return _back(f"{PREFIX}/jobs", notice=done.notice)

    async def task_action(self, request: Request, grant: Grant) -> Response:
        """Run now, pause or resume the task named in the form."""
        action = request.path_params["action"]
        name = (await request.form()).get("name")
        back = f"{PREFIX}/jobs/tasks"
        if not isinstance(name, str):
            return self._plain(400, "post name=<task> to /tasks/<action>")
        try:
            if action == "run-now":
                done = await operations.run_task_now(self.d.tasks, name)
            elif action in ("pause", "resume"):
                done = await operations.set_task_paused(
                    self.d.tasks,
                    self.d.driver,
                    name,
                    paused=action == "pause",
                    now_ms=self.d.driver.clock.now_ms(),
                )
            else:
                return self._plain(404, f"no task action {quoted(action)} here")
        except FerryError as refused:
            return _back(back, error=error_key(refused))
        return _back(back, notice=done.notice)

    # -- rendering ---------------------------------------------------------------------

    def _page(
        self,
        request: Request,
        grant: Grant,
        template: str,
        *,
        status: int = 200,
        refresh: bool = False,
        error: str | None = None,
        **context: Any,
    ) -> Response:
        paused = request.query_params.get("refresh") == "off"
        # The toggle keeps the filters but not a one-time banner or the refresh switch.
        query = {
            k: v for k, v in request.query_params.items() if k not in ("refresh", "notice", "error")
        }
        html = self.templates.get_template(template).render(
            prefix=PREFIX,
            csrf=self.d.access.csrf_token(grant),
            can_manage="job:manage" in grant.permissions,
            session=grant.session is not None,
            notice=notice_text(request.query_params.get("notice")),
            error=error or error_text(request.query_params.get("error")),
            refresh_s=REFRESH_S if refresh and not paused else 0,
            refresh_toggle=(
                None
                if not refresh
                else f"?{urlencode({**query, 'refresh': 'off'})}"
                if not paused
                else f"?{urlencode(query)}"
            ),
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def _throttled(self, wait_s: int) -> Response:
        response = self._plain(
            429, f"X_THROTTLED: too many wrong tokens from your address: try again in {wait_s} s"
        )
        response.headers["Retry-After"] = str(wait_s)
        return response

    def _plain(self, status: int, message: str) -> Response:
        return _secured(
            HTMLResponse(
                self.templates.get_template("refused.html").render(
                    status=status, message=message, prefix=PREFIX
                ),
                status_code=status,
            )
        )

    def _set_session(self, request: Request, response: Response, grant: Grant) -> None:
        response.set_cookie(
            SESSION_COOKIE,
            self.d.access.cookie_value(grant),
            max_age=SESSION_MAX_AGE_S,
            path=PREFIX,
            httponly=True,
            samesite="strict",
            # The scheme the server saw: https directly, or from a proxy named with
            # --trust-proxy (the server rewrites it then; a header alone changes nothing).
            secure=request.url.scheme == "https",
        )


@dataclass(frozen=True, slots=True)
class TimelineBar:
    """One step drawn on the run's timeline, as percentages of the whole span."""

    name: str
    kind: str
    started_at_ms: int
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
            started_at_ms=step.started_at_ms,
            offset_pct=round((step.started_at_ms - start) * 100 / span, 2),
            width_pct=max(round((step.finished_at_ms - step.started_at_ms) * 100 / span, 2), 0.5),
            took_ms=step.finished_at_ms - step.started_at_ms,
            result=step.result,
            wake_at_ms=step.wake_at_ms,
        )
        for step in run.steps
    ]


def _span_ms(run: RunDetail) -> int:
    """From the first step's start to the last one's end (0 without steps)."""
    if not run.steps:
        return 0
    return max(s.finished_at_ms for s in run.steps) - min(s.started_at_ms for s in run.steps)


def _text(value: object) -> str | None:
    """A form field's text (an upload or a missing field: None)."""
    return value if isinstance(value, str) else None


def _script(body: bytes) -> Response:
    response = Response(body, media_type="text/javascript")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _client(request: Request) -> str:
    """The address a request came from: the TCP peer as the server reports it (behind a
    proxy named with ``--trust-proxy``, the client that proxy reports)."""
    return request.client.host if request.client else "unknown"


def _shown(words: dict[str, str | None]) -> dict[str, str]:
    """The filter words as the form's inputs show them back."""
    return {k: v or "" for k, v in words.items()}


def _bounded_json(value: Any, limit: int) -> tuple[str, bool]:
    """``value`` pretty-printed when it is small, else its first ``limit`` characters of
    compact JSON: indenting a huge payload is what would cost the time."""
    compact = json.dumps(value, ensure_ascii=False, default=str)
    if len(compact) > limit:
        return compact[:limit], True
    return json.dumps(value, indent=2, ensure_ascii=False, default=str), False


def _back(path: str, *, notice: str | None = None, error: str | None = None) -> Response:
    query = urlencode({k: v for k, v in (("notice", notice), ("error", error)) if v})
    joint = "&" if "?" in path else "?"
    return _secured(RedirectResponse(f"{path}{joint}{query}" if query else path, status_code=303))


def _secured(response: Response) -> Response:
    response.headers.update(_SECURITY_HEADERS)
    return response
