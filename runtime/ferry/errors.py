"""Every refusal ferry makes: one exception type, one catalogue of codes.

A ``FerryError`` always carries three things a person needs at 3 a.m.: the stable
``X_*`` code (grep-able, alertable), a message naming the thing that was refused,
and a ``fix:`` line saying what to change. ``str(error)`` renders all three.
"""

from __future__ import annotations

from typing import Final

#: code -> what it means. ``docs/errors.md`` lists exactly these (a test keeps them in step).
CODES: Final[dict[str, str]] = {
    "X_INVARIANT": "a declaration or argument breaks a rule ferry enforces where it is written",
    "X_OUT_OF_RANGE": "a number, duration, instant or count is outside its documented bound",
    "X_RUN_ID_INVALID": "a run id is not a whole number from 1 to 2^63-1 (no run can have it)",
    "X_USAGE": "a command line does not parse: an unknown command, flag or a missing argument",
    "X_THROTTLED": "too many failed sign-ins or bearer tokens from one address; wait and retry",
    "X_IDEMPOTENCY_REQUIRED": "a job (or a task's entry) has no idempotency key",
    "X_VALIDATION": "a job input does not match the job's input schema",
    "X_PAYLOAD_NOT_JSON": "a payload or step result holds a value with no JSON form",
    "X_PAYLOAD_TOO_LARGE": "an input's or a result's JSON is over the driver's max_payload_bytes",
    "X_PAYLOAD_TOO_DEEP": "a payload or step result nests lists and dicts more than 64 deep",
    "X_TEXT_NOT_STORABLE": "a name, key or stored string holds a NUL or a lone surrogate",
    "X_IDEMPOTENCY_KEY_INVALID": "an idempotency key is over 512 bytes of UTF-8",
    "X_STEP_DUPLICATE": "one run called step.run/step.sleep twice with the same name",
    "X_ABORTED": "the run's signal was aborted, so a step result is not recorded",
    "X_TIMEOUT": "an attempt ran past the job's timeout",
    "X_DRAINING": "the worker is draining (SIGTERM) and aborted the run; the attempt is uncounted",
    "X_LEASE_LOST": "the worker could not renew the run's lease for a whole window",
    "X_CANCELLED": "an operator cancelled the run",
    "X_JOB_CANCELLED": "a result was asked of a run that was cancelled, so it has none",
    "X_RESULT_TIMEOUT": "a run had not ended within the time its result was waited for",
    "X_WAIT_TIMEOUT": "a step.wait's children had not all ended by its deadline",
    "X_JOB_FAILED": "the job body raised; the error message is the body's",
    "X_JOB_UNKNOWN": "a queued run names a job this process has not declared",
    "X_TASK_UNKNOWN": "a command named a task the application does not declare",
    "X_APP_IMPORT": "the application module (--app) raised while it was being imported",
    "X_SELECTION_CHANGED": "the runs a bulk action's filter matches changed since its preview",
    "X_QUEUE_UNKNOWN": "a queue was paused that no run, pause or declared job has ever named",
    "X_CAP_REACHED": "a tenant, queue or total cap of the worker fleet was full; the run waits",
    "X_RATE_INVALID": "a RateLimit's limit, per or key is not one ferry can hold",
    "X_CONCURRENCY_BUSY": "a concurrency slot was busy and the job declared when_busy='fail'",
    "X_JOB_CONCURRENCY_UNENFORCEABLE": "jobs declare concurrency but the driver offers no slots",
    "X_DRIVER_UNSET": "an enqueue or a worker ran before any job driver was configured",
    "X_DRIVER_NO_TRANSACTIONS": "an enqueue asked to join a transaction the driver cannot join",
    "X_DRIVER_CAPABILITY": "a role or feature needs a capability the driver does not offer",
    "X_DRIVER_CLOSED": "the job driver was used after close()",
    "X_CONNECTION_CLOSED": "an enqueue or outbox append was given a closed connection or session",
    "X_SYNC_ON_EVENT_LOOP": "blocking database work was asked of a thread running an event loop",
    "X_RUN_NOT_FOUND": "an introspection call named a run id that does not exist",
    "X_RUN_STATE": "an introspection action does not apply to the run's current state",
    "X_UNAUTHENTICATED": "an admin tool call came without a valid access token",
    "X_FORBIDDEN": "an admin tool call's token lacks the permission the tool needs",
    "X_EXTRA_MISSING": "a feature needs an optional extra of ferry that is not installed",
    "X_DB_UNREACHABLE": "a command, role or ferry doctor could not connect to the database",
    "X_DB_URL_INVALID": "the database URL is malformed, so no connection was tried",
    "X_DB_BUSY": "a SQLite database stayed locked by another connection past busy_timeout",
    "X_MIGRATIONS_PENDING": "the schema lacks migrations this version of ferry ships",
    "X_SCHEMA_NEWER": "the schema was migrated by a newer ferry than this one",
    "X_SCHEMA_DRIFT": "the migration ledger disagrees with the schema or the shipped migrations",
    "X_NO_SCHEDULER_LEADER": "tasks were dispatched on this schema but no scheduler leads now",
    "X_STUCK_LEASES": "running runs whose lease lapsed and that no worker has taken over",
    "X_CLOCK_SKEW": "this process's clock and the database's differ by more than allowed",
    "X_DRAIN_NOT_DURABLE": "a drain named a store that lives only in its own process",
    "X_DRAIN_SAME_STORE": "a drain's --from and --to name the same store",
    "X_DRAIN_KEY_COLLISION": "a run was not moved: the target gives its key to a different run",
    "X_DRAIN_CONTENDED": "a drain stopped: another drain to the same target keeps taking its runs",
    "X_WEBHOOK_ENDPOINT_UNKNOWN": "a webhook delivery names an endpoint the app did not find",
    "X_WEBHOOK_ENDPOINT_INVALID": "a webhook endpoint's URL or secrets cannot be delivered to",
    "X_WEBHOOK_ENDPOINT_DISABLED": "a webhook endpoint is disabled (410, or too many failures)",
    "X_WEBHOOK_EVENT_UNKNOWN": "a webhook delivery names an event the app did not find",
    "X_WEBHOOK_EVENT_INVALID": "a webhook event has no topic or a body with no JSON form",
    "X_WEBHOOK_DELIVERY_FAILED": "a webhook endpoint answered 5xx or could not be reached",
    "X_WEBHOOK_DELIVERY_THROTTLED": "a webhook endpoint answered 429 (retried after Retry-After)",
    "X_WEBHOOK_DELIVERY_REJECTED": "a webhook endpoint answered a 4xx other than 410 and 429",
    "X_WEBHOOK_SIGNATURE_INVALID": "a received webhook's signature or timestamp does not verify",
    "X_OPERATOR_CONFLICT": "another release's ferry operator already reconciles these namespaces",
}


class FerryError(Exception):
    """A refusal with a stable code, a message naming the thing, and a fix."""

    code: str
    message: str
    fix: str
    detail: str | None
    """What a person needs beyond the message, when there is more (the traceback of the
    application's own import error); shown on stderr, never part of the envelope."""

    def __init__(self, code: str, message: str, fix: str, *, detail: str | None = None) -> None:
        if code not in CODES:
            raise ValueError(f"unknown ferry error code {code!r}")
        super().__init__(f"{code}: {message}\nfix: {fix}")
        self.code = code
        self.message = message
        self.fix = fix
        self.detail = detail

    def to_dict(self) -> dict[str, str]:
        """The shape the CLI's ``--json`` envelope and the stored ``last_error`` use."""
        return {"code": self.code, "message": self.message, "fix": self.fix}
