"""Runs: list, show, retry and cancel, as every surface calls them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from ferry._operations.envelope import Action, camel_keys
from ferry._operations.filters import run_filter
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


@dataclass(frozen=True, slots=True)
class RunsPage:
    """One page of runs under a filter, newest first."""

    filter: RunFilter
    runs: Sequence[RunSummary]

    @property
    def summary(self) -> str:
        """The envelope's summary line."""
        return f"{len(self.runs)} run(s)"

    @property
    def next_before_id(self) -> str | None:
        """The ``before`` that pages on, when this page is full."""
        return self.runs[-1].id if len(self.runs) == self.filter.limit and self.runs else None

    def to_json(self) -> dict[str, Any]:
        """``{"runs": [...], "nextBeforeId": ...}``: ``ferry jobs ls --json``'s data."""
        runs = [asdict(r) for r in self.runs]
        return camel_keys({"runs": runs, "next_before_id": self.next_before_id})  # type: ignore[no-any-return]


async def list_runs(driver: JobDriver, words: Mapping[str, str | None]) -> RunsPage:
    """One page of runs under the operator's filter words (see ``run_filter``).

    A completed run is listed without an error: its last failed attempt's error is history
    (``jobs show`` keeps it), not what the run is now."""
    wanted = run_filter(words, now_ms=driver.clock.now_ms())
    runs = await introspection(driver).list_runs(wanted)
    return RunsPage(
        wanted, [replace(r, last_error=None) if r.state == "completed" else r for r in runs]
    )


async def show_run(driver: JobDriver, run_id: str) -> RunDetail:
    """Everything known about one run; ``X_RUN_NOT_FOUND`` when no run has the id."""
    run = await introspection(driver).get_run(run_id)
    if run is None:
        raise run_not_found(run_id)
    return run


def run_headline(run: RunDetail) -> str:
    """``jobs show``'s summary line: the run, its job and its state."""
    s = run.summary
    return f'run {s.id} of job "{s.name}" is {s.state}'


def run_json(run: RunDetail) -> dict[str, Any]:
    """A run as ``ferry jobs show --json`` carries it: its own fields in camelCase, the
    stored values as stored (an input's ``org_id`` stays ``org_id``), each copied once."""
    bare = replace(
        run, payload=None, result=None, steps=[replace(st, result=None) for st in run.steps]
    )
    data: dict[str, Any] = camel_keys(asdict(bare))
    data["payload"], data["result"] = run.payload, run.result
    for shown, step in zip(data["steps"], run.steps, strict=True):
        shown["result"] = step.result
    return data


async def retry_run(driver: JobDriver, run_id: str) -> Action:
    """Put a dead or cancelled run back to queued with fresh attempts."""
    await introspection(driver).retry_run(run_id)
    return Action(f"run {run_id} is queued again", {"id": run_id, "state": "queued"}, "run-retried")


async def cancel_run(driver: JobDriver, run_id: str) -> Action:
    """Cancel a run; a running one is asked to stop at its worker's next heartbeat."""
    state = await introspection(driver).cancel_run(run_id)
    running = state == "running"
    summary = (
        f"run {run_id} is running: cancel requested; its worker aborts it at its next "
        "heartbeat and settles it cancelled"
        if running
        else f"run {run_id} is cancelled"
    )
    data = {"id": run_id, "state": state, "cancelRequested": running}
    return Action(summary, data, "run-cancel-requested" if running else "run-cancelled")
