"""Runs: list, show, retry and cancel, as every surface calls them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from ferry._bounds import run_id
from ferry._operations.envelope import Action, camel_keys
from ferry._operations.filters import instant, run_filter
from ferry.drivers._refusals import run_not_found
from ferry.drivers.capabilities import INTROSPECT, need
from ferry.drivers.protocol import (
    JobDriver,
    JobIntrospection,
    JobState,
    RunDetail,
    RunFilter,
    RunSummary,
)

WAITING_STATES: tuple[JobState, ...] = ("queued", "sleeping")
"""The states whose ``run_at`` says when the run is next due: every listing shows it."""


def introspection(driver: JobDriver) -> JobIntrospection:
    """The driver's introspection; ``X_DRIVER_CAPABILITY`` on a driver without it."""
    return need(
        driver, INTROSPECT, by="operator reads and actions (ferry jobs, the dashboard, MCP)"
    )


SEARCH_WINDOW = 100_000
"""How many run ids one page of a search reads at most: a search of error text or input
has no index to walk, so each page reads the ids below its ``before`` down to this many
fewer, whatever it finds — bounded time at any table size, continued by ``nextBeforeId``."""


@dataclass(frozen=True, slots=True)
class RunsPage:
    """One page of runs under a filter, newest first."""

    filter: RunFilter
    runs: Sequence[RunSummary]
    searched_below_id: str | None = None
    """For a search page that did not fill: the lowest id its window read (the next page
    reads below it)."""

    @property
    def summary(self) -> str:
        """The envelope's summary line."""
        shown = f"{len(self.runs)} run(s)"
        if self.searched_below_id is not None and len(self.runs) < self.filter.limit:
            shown += f" among the runs from id {self.searched_below_id} on (page on for older)"
        return shown

    @property
    def next_before_id(self) -> str | None:
        """The ``before`` that pages on: after the last run of a full page, or below the
        window a search read; None when nothing older is left to read."""
        if len(self.runs) == self.filter.limit and self.runs:
            return self.runs[-1].id
        return self.searched_below_id

    def to_json(self) -> dict[str, Any]:
        """``{"runs": [...], "nextBeforeId": ...}``: ``ferry jobs ls --json``'s data."""
        runs = [asdict(r) for r in self.runs]
        return camel_keys({"runs": runs, "next_before_id": self.next_before_id})  # type: ignore[no-any-return]


async def list_runs(driver: JobDriver, words: Mapping[str, str | None]) -> RunsPage:
    """One page of runs under the operator's filter words (see ``run_filter``).

    A completed run is listed without an error: its last failed attempt's error is history
    (``jobs show`` keeps it), not what the run is now."""
    wanted = run_filter(words, now_ms=driver.clock.now_ms())
    introspect = introspection(driver)
    floor = await _search_floor(introspect, wanted)
    if floor is not None:
        wanted = replace(wanted, after_id=str(floor - 1) if floor > 1 else None)
    runs = await introspect.list_runs(wanted)
    return RunsPage(
        wanted,
        [replace(r, last_error=None) if r.state == "completed" else r for r in runs],
        searched_below_id=str(floor) if floor is not None and floor > 1 else None,
    )


def is_search(wanted: RunFilter) -> bool:
    """Whether the filter has a word no index serves (error text, input): its pages read
    bounded windows of ids."""
    return wanted.error_text is not None or wanted.input_contains is not None


async def _search_floor(introspect: JobIntrospection, wanted: RunFilter) -> int | None:
    """The lowest id a search page reads (``SEARCH_WINDOW`` below its ``before``, or below
    the newest run); None when the filter is no search, or no run is there to read."""
    if not is_search(wanted):
        return None
    if wanted.before_id is not None:
        top = int(wanted.before_id)
    else:
        newest = await introspect.list_runs(RunFilter(limit=1))
        if not newest:
            return None
        top = int(newest[0].id) + 1
    return max(top - SEARCH_WINDOW, 1)


async def show_run(driver: JobDriver, id: str | int) -> RunDetail:
    """Everything known about one run; ``X_RUN_ID_INVALID`` for an id no run can have,
    ``X_RUN_NOT_FOUND`` when no run has it."""
    wanted = run_id(id)
    run = await introspection(driver).get_run(wanted)
    if run is None:
        raise run_not_found(wanted)
    return run


def waiting_for(run: RunDetail) -> str | None:
    """Why a queued run is not due yet, when ferry put it off (every surface shows this
    line): ``deferred by rate limit until <instant>`` while the instant a claim deferred it
    to is still its ``run_at``; None otherwise."""
    until = run.rate_deferred_until_ms
    if run.summary.state == "queued" and until is not None and until == run.summary.run_at_ms:
        return f"deferred by rate limit until {instant(until)}"
    return None


def run_headline(run: RunDetail) -> str:
    """The one line ``jobs show`` answers with on every surface: the run, its job, its
    state, and why it waits when ferry put it off."""
    s = run.summary
    waiting = waiting_for(run)
    return f'run {s.id} of job "{s.name}" is {s.state}' + (f" ({waiting})" if waiting else "")


def run_json(run: RunDetail) -> dict[str, Any]:
    """A run as ``ferry jobs show --json`` carries it: its own fields in camelCase, the
    stored values as stored (an input's ``org_id`` stays ``org_id``), each copied once,
    and ``waiting`` (``waiting_for``)."""
    bare = replace(
        run, payload=None, result=None, steps=[replace(st, result=None) for st in run.steps]
    )
    data: dict[str, Any] = camel_keys(asdict(bare))
    data["payload"], data["result"] = run.payload, run.result
    for shown, step in zip(data["steps"], run.steps, strict=True):
        shown["result"] = step.result
    data["waiting"] = waiting_for(run)
    return data


async def retry_run(driver: JobDriver, id: str | int) -> Action:
    """Put a dead or cancelled run back to queued with fresh attempts."""
    wanted = run_id(id)
    await introspection(driver).retry_run(wanted)
    return Action(f"run {wanted} is queued again", {"id": wanted, "state": "queued"}, "run-retried")


async def cancel_run(driver: JobDriver, id: str | int) -> Action:
    """Cancel a run; a running one is asked to stop at its worker's next heartbeat."""
    wanted = run_id(id)
    state = await introspection(driver).cancel_run(wanted)
    running = state == "running"
    summary = (
        f"run {wanted} is running: cancel requested; its worker aborts it at its next "
        "heartbeat and settles it cancelled"
        if running
        else f"run {wanted} is cancelled"
    )
    data = {"id": wanted, "state": state, "cancelRequested": running}
    return Action(summary, data, "run-cancel-requested" if running else "run-cancelled")
