"""The operations layer: what the CLI, the dashboard and the MCP server share.

Every operator read and action is written once here (``runs``, ``queues``, ``workers``,
``schedules``), with the filter words operators type (``filters``), the JSON envelope
every ``--json`` answer and MCP tool result carries (``envelope``), the bounded previews
of stored values (``preview``) and the tokens that say who may read or act (``access``).
The three surfaces above only parse their own input and render these values, so a rule
cannot mean one thing in a terminal and another on a page. Nothing here imports a web
framework, the MCP SDK or the CLI.
"""

from ferry._operations.enqueue import enqueue_job, find_job, input_of
from ferry._operations.envelope import Action, Outcome, camel_keys
from ferry._operations.queues import (
    DEFAULT_WINDOW_MS,
    QueueOverview,
    queue_overview,
    queue_stats,
    set_queue_paused,
    stats_json,
    stats_summary,
    stats_window_ms,
)
from ferry._operations.runs import (
    RunsPage,
    cancel_run,
    list_runs,
    retry_run,
    run_headline,
    run_json,
    show_run,
    waiting_for,
)
from ferry._operations.schedules import (
    find_task,
    run_task_now,
    set_task_paused,
    task_status,
    task_statuses,
)
from ferry._operations.workers import list_workers, workers_json, workers_summary

__all__ = [
    "DEFAULT_WINDOW_MS",
    "Action",
    "Outcome",
    "QueueOverview",
    "RunsPage",
    "camel_keys",
    "cancel_run",
    "enqueue_job",
    "find_job",
    "find_task",
    "input_of",
    "list_runs",
    "list_workers",
    "queue_overview",
    "queue_stats",
    "retry_run",
    "run_headline",
    "run_json",
    "run_task_now",
    "set_queue_paused",
    "set_task_paused",
    "show_run",
    "stats_json",
    "stats_summary",
    "stats_window_ms",
    "task_status",
    "task_statuses",
    "waiting_for",
    "workers_json",
    "workers_summary",
]
