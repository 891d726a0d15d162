"""The banners a page shows after an action: keys in the URL, text only from this table.

An action answers with a redirect (post/redirect/get), so its outcome rides in the query
string. Carrying the text there would let any link put words of its author's choosing in
the dashboard's own banner ("Your token expired, paste it at evil.example"); carrying a
key lets the link pick only among these sentences. An unknown key shows nothing.
"""

from __future__ import annotations

from ferry.errors import FerryError

NOTICES: dict[str, str] = {
    "run-retried": "The run is queued again.",
    "run-cancelled": "The run is cancelled.",
    "run-cancel-requested": (
        "Cancel requested: the run's worker aborts it at its next heartbeat and settles it "
        "cancelled."
    ),
    "queue-paused": "The queue is paused: its runs stay queued until it is resumed.",
    "queue-resumed": "The queue is resumed.",
    "task-fired": (
        "The task fired its entries now (a run already enqueued under the same key is not "
        "enqueued twice)."
    ),
    "task-paused": "The task is paused: the scheduler skips its occurrences until resumed.",
    "task-resumed": "The task is resumed.",
    "dead-retried": "The selected runs are queued again.",
    "dead-none-selected": "No run was selected.",
    "bulk-retried": "The selected runs are queued again.",
    "bulk-cancelled": "The selected runs are cancelled (running ones are asked to stop).",
    "bulk-deleted": "The selected runs are deleted.",
    "bulk-partial": (
        "Done, but some selected runs were skipped: their state changed meanwhile, or they "
        "are gone."
    ),
}

ERRORS: dict[str, str] = {
    "X_RUN_STATE": (
        "X_RUN_STATE: the run's state does not allow that action (it may have changed since "
        "the page was drawn)."
    ),
    "X_RUN_NOT_FOUND": "X_RUN_NOT_FOUND: no run has that id (it may have been pruned).",
    "X_TASK_UNKNOWN": "X_TASK_UNKNOWN: the application declares no task of that name.",
    "action-refused": "The action was refused; the CLI's `--json` output names the reason.",
    "X_SELECTION_CHANGED": (
        "X_SELECTION_CHANGED: the runs this filter selects changed since the preview, so "
        "nothing was done. This is the new selection: confirm it, or go back."
    ),
    "dead-retry-partial": (
        "X_RUN_STATE: some selected runs were not retried: they were no longer dead (retried "
        "or pruned meanwhile)."
    ),
}


def notice_text(key: str | None) -> str | None:
    """The sentence a notice key stands for (None for no key or an unknown one)."""
    return NOTICES.get(key) if key else None


def error_text(key: str | None) -> str | None:
    """The sentence an error key stands for (None for no key or an unknown one)."""
    return ERRORS.get(key) if key else None


def error_key(refused: FerryError) -> str:
    """The banner key for a refusal: its code, when the table words it."""
    return refused.code if refused.code in ERRORS else "action-refused"
