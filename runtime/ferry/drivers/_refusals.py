"""The refusals every driver (and the CLI) words the same way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ferry.drivers.protocol import EnqueueRequest, JobState, RunChange
from ferry.errors import FerryError


def run_not_found(job_id: str) -> FerryError:
    """``X_RUN_NOT_FOUND`` for an id no run has."""
    return FerryError(
        "X_RUN_NOT_FOUND",
        f"no run has id {job_id!r}",
        "list runs with `ferry jobs ls --json` and use an id from there",
    )


def run_in_wrong_state(
    job_id: str, job_name: str, state: str, action: str, allowed: str
) -> FerryError:
    """``X_RUN_STATE``: ``action`` (e.g. "retried") applies only to ``allowed`` runs."""
    return FerryError(
        "X_RUN_STATE",
        f'run {job_id} of job "{job_name}" is {state}; only {allowed} runs can be {action}',
        f"check the run with `ferry jobs show {job_id}` first",
    )


RETRYABLE: frozenset[JobState] = frozenset({"dead", "cancelled"})
CANCELLABLE: frozenset[JobState] = frozenset({"queued", "sleeping", "running"})
DELETABLE: frozenset[JobState] = frozenset({"queued", "sleeping", "completed", "dead", "cancelled"})
"""The states each operator action applies to (a running run belongs to its worker, a
moving one to its drain: neither is deleted from under them)."""


def one_change(job_id: str, changes: Sequence[RunChange], action: str, allowed: str) -> JobState:
    """The state one run had before a one-run action, from the many-run action's answer;
    ``X_RUN_NOT_FOUND`` when no run has the id, ``X_RUN_STATE`` when it did not apply."""
    if not changes:
        raise run_not_found(job_id)
    [change] = changes
    if not change.changed:
        raise run_in_wrong_state(job_id, change.name, change.state, action, allowed)
    return change.state


class _ManyRunActions(Protocol):
    async def retry_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]: ...

    async def cancel_runs(self, job_ids: Sequence[str]) -> Sequence[RunChange]: ...


class OneRunActions:
    """``retry_run`` and ``cancel_run``, written once over a driver's many-run actions
    (what a bulk action sends): the one run's answer read with ``one_change``."""

    async def retry_run(self: _ManyRunActions, job_id: str) -> None:
        one_change(job_id, await self.retry_runs([job_id]), "retried", "dead or cancelled")

    async def cancel_run(self: _ManyRunActions, job_id: str) -> JobState:
        changes = await self.cancel_runs([job_id])
        before = one_change(job_id, changes, "cancelled", "queued, sleeping or running")
        return "running" if before == "running" else "cancelled"


def no_transaction_to_join(what: str, driver: str, fix: str) -> FerryError:
    """``X_DRIVER_NO_TRANSACTIONS``: ``what`` (e.g. ``'enqueue of job "send"'``) asked to
    join a transaction, and ``driver`` keeps nothing in the application's database — a
    refusal rather than a write that silently does not join."""
    return FerryError(
        "X_DRIVER_NO_TRANSACTIONS",
        f"{what} asked to join a transaction, and the {driver} driver has no transaction of "
        "the application's to join",
        fix,
    )


def shared_connection(requests: Sequence[EnqueueRequest]) -> Any:
    """The one connection a batch of enqueues joins (``None``: the driver's own);
    ``X_INVARIANT`` when the batch names several."""
    connection = requests[0].connection
    if any(r.connection is not connection for r in requests):
        raise FerryError(
            "X_INVARIANT",
            f"enqueue_many got {len(requests)} requests that join different transactions",
            "pass one connection= for the whole batch, or enqueue them separately",
        )
    return connection
