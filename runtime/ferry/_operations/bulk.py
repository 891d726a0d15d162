"""Retry, cancel or delete every run a filter matches: previewed, then confirmed.

A bulk action is two calls. ``preview`` selects the runs the filter matches that the
action applies to (retry: dead or cancelled; cancel: queued, sleeping or running; delete:
any run no worker or drain holds) and answers how many, some of their ids, and a
``selection`` token — a digest of the action and every selected id. ``apply`` selects again
and acts only if the token is still the same: exactly the runs that were previewed, or
nothing (``X_SELECTION_CHANGED``: preview again). The runs are then changed in batches,
each run's state checked where it changes, so a run that moved on in between is skipped
and counted, never forced.

A selection holds at most ``MAX_BULK`` runs (a filter matching more is refused: narrow it,
e.g. by ``until``), and a bulk action needs at least one filter word: "every run" is not a
filter anyone means to confirm.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ferry._operations.envelope import Action
from ferry._operations.filters import run_filter
from ferry._operations.runs import introspection
from ferry.drivers._refusals import CANCELLABLE, DELETABLE, RETRYABLE
from ferry.drivers.protocol import JobDriver, JobState, RunChange, RunFilter
from ferry.errors import FerryError

BulkAction = Literal["retry", "cancel", "delete"]
BULK_ACTIONS: tuple[BulkAction, ...] = ("retry", "cancel", "delete")
MAX_BULK = 10_000
"""The most runs one bulk action selects."""
SAMPLE = 100
"""How many of the selected ids a preview shows."""
BATCH = 500
"""Runs changed per statement (script, transaction)."""

APPLIES: Mapping[BulkAction, frozenset[JobState]] = {
    "retry": RETRYABLE,
    "cancel": CANCELLABLE,
    "delete": DELETABLE,
}
DONE: Mapping[BulkAction, str] = {"retry": "retried", "cancel": "cancelled", "delete": "deleted"}
"""What each action does to a run, as a sentence says it."""
_NOT_FILTERS = ("before", "limit")


@dataclass(frozen=True, slots=True)
class Selection:
    """The runs one bulk action would change, and the token that names exactly them."""

    action: BulkAction
    filter: RunFilter
    ids: tuple[str, ...]

    @property
    def token(self) -> str:
        """A digest of the action and the selected ids: equal tokens, equal selections."""
        digest = hashlib.sha256(self.action.encode())
        for run_id in self.ids:
            digest.update(b"," + run_id.encode())
        return digest.hexdigest()[:24]

    @property
    def summary(self) -> str:
        return f"{len(self.ids)} run(s) would be {DONE[self.action]} (selection {self.token})"

    def to_json(self) -> dict[str, Any]:
        """``ferry jobs bulk <action> --dry-run --json``'s data."""
        return {
            "action": self.action,
            "count": len(self.ids),
            "selection": self.token,
            "sample": list(self.ids[:SAMPLE]),
        }


def bulk_action(text: str) -> BulkAction:
    """``text`` as a bulk action; ``X_INVARIANT`` naming the ones there are."""
    for action in BULK_ACTIONS:
        if text == action:
            return action
    raise FerryError(
        "X_INVARIANT",
        f"{text[:40]!r} is not a bulk action",
        f"use one of: {', '.join(BULK_ACTIONS)}",
    )


async def preview(
    driver: JobDriver, action: BulkAction, words: Mapping[str, str | None]
) -> Selection:
    """Every run the filter matches that ``action`` applies to, newest first."""
    given = {w: v for w, v in words.items() if w not in _NOT_FILTERS and (v or "").strip()}
    if not given:
        raise FerryError(
            "X_INVARIANT",
            f"a bulk {action} needs a filter, and none was given",
            "narrow it with state, view, queue, job, tenant, since/until, key, error_code, "
            "error_text or input (see `ferry jobs ls` for the words)",
        )
    wanted = replace(
        run_filter(given, now_ms=driver.clock.now_ms()), limit=MAX_BULK + 1, before_id=None
    )
    runs = await introspection(driver).list_runs(wanted)
    if len(runs) > MAX_BULK:
        raise FerryError(
            "X_INVARIANT",
            f"the filter matches more than {MAX_BULK:,} runs, more than one bulk {action} takes",
            "narrow it (until, since, queue, job, state) and act on the runs part by part",
        )
    applies = APPLIES[action]
    return Selection(action, wanted, tuple(r.id for r in runs if r.state in applies))


async def apply(
    driver: JobDriver, action: BulkAction, words: Mapping[str, str | None], selection: str
) -> Action:
    """Act on exactly the runs previewed under ``selection``; ``X_SELECTION_CHANGED``
    (nothing done) when the filter now selects others."""
    again = await preview(driver, action, words)
    if again.token != selection:
        raise FerryError(
            "X_SELECTION_CHANGED",
            f"the runs this bulk {action} selects changed since the preview ({len(again.ids)} "
            f"run(s) now, selection {again.token} instead of {selection[:40]}): nothing was "
            f"{DONE[action]}",
            "preview again (--dry-run, the dashboard's preview, the preview tool) and confirm "
            "what it shows",
        )
    changes = await _act(driver, action, again.ids)
    changed = [c.id for c in changes if c.changed]
    skipped = [run_id for run_id in again.ids if run_id not in set(changed)]
    summary = f"{len(changed)} run(s) {DONE[action]}" + (
        f", {len(skipped)} skipped (their state changed meanwhile, or they are gone)"
        if skipped
        else ""
    )
    data = {
        "action": action,
        "selection": selection,
        "count": len(again.ids),
        "changed": len(changed),
        "skipped": skipped[:SAMPLE],
    }
    return Action(summary, data, f"bulk-{DONE[action]}" if not skipped else "bulk-partial")


async def _act(driver: JobDriver, action: BulkAction, ids: Sequence[str]) -> list[RunChange]:
    introspect = introspection(driver)
    act = {
        "retry": introspect.retry_runs,
        "cancel": introspect.cancel_runs,
        "delete": introspect.delete_runs,
    }[action]
    changes: list[RunChange] = []
    for start in range(0, len(ids), BATCH):
        changes.extend(await act(ids[start : start + BATCH]))
    return changes
