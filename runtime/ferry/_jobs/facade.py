"""The one enqueue implementation, and the ambient driver and transaction it resolves.

``<job>.enqueue``, ``<task>.enqueue``, the scheduler's dispatch and the outbox relay all
come through ``enqueue``/``enqueue_many`` here, so "does this join my transaction?" has
one answer everywhere: it does when a connection is passed or bound with
``use_connection``, and the commit is the enqueue. ``enqueue_sync`` is the same enqueue for
sync code (``ferry._bridge`` says where it runs).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from ferry._bounds import INT32_MAX, INT32_MIN, bounded_int, check_instant_ms
from ferry._bridge import default_connection, run_sync, serve
from ferry._duration import Duration, to_ms
from ferry._jobs.definition import JobDefinition
from ferry._names import check_name
from ferry._payload import DEFAULT_MAX_PAYLOAD_BYTES, to_json_text
from ferry._storable import checked_key, quoted
from ferry._tracecontext import current_traceparent
from ferry.drivers.protocol import RETAINED, EnqueueRequest, EnqueueResult, JobDriver
from ferry.errors import FerryError

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_driver: JobDriver | None = None
_connection: ContextVar[Any] = ContextVar("ferry_connection", default=None)


def set_job_driver(driver: JobDriver | None) -> JobDriver | None:
    """Make ``driver`` the one every enqueue and worker uses; returns the previous one."""
    global _driver
    previous, _driver = _driver, driver
    return previous


def current_job_driver() -> JobDriver:
    """The configured driver, or ``X_DRIVER_UNSET``."""
    if _driver is None:
        raise FerryError(
            "X_DRIVER_UNSET",
            "no job driver is configured, so there is nowhere to enqueue",
            "call ferry.set_job_driver(postgres_job_driver(dsn)) at start-up "
            "(memory_job_driver() for tests and local experiments)",
        )
    return _driver


@contextmanager
def use_connection(connection: Any) -> Iterator[None]:
    """Bind ``connection`` (any the driver joins: an asyncpg or psycopg connection, a
    SQLAlchemy session, an aiosqlite connection after ``BEGIN IMMEDIATE``…) so every
    enqueue in this context joins its transaction without passing it along."""
    token = _connection.set(connection)
    try:
        yield
    finally:
        _connection.reset(token)


def parse_input(definition: JobDefinition[Any, Any], value: Any) -> BaseModel:
    """``value`` as the job's input model, or ``X_VALIDATION`` naming the bad fields."""
    model = definition.input_model
    if isinstance(value, model):
        return value  # type: ignore[no-any-return]
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if not isinstance(value, Mapping):
        raise FerryError(
            "X_VALIDATION",
            f'input for job "{definition.name}" is a {type(value).__name__}, '
            f"not a {model.__name__} or a mapping",
            f"pass {model.__name__}(...) or a dict of its fields",
        )
    try:
        parsed: BaseModel = model.model_validate(value)
        return parsed
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(input)'}: {e['msg']}" for e in error.errors()
        )
        raise FerryError(
            "X_VALIDATION",
            f'input for job "{definition.name}" does not match {model.__name__}: {problems}',
            f"fix the named fields so the input validates against {model.__name__}",
        ) from None


def idempotency_key_of(definition: JobDefinition[Any, Any], parsed: BaseModel) -> str:
    """The declared key for ``parsed``; an empty or non-string key is refused."""
    key = definition.idempotency_key(parsed)
    if not isinstance(key, str) or not key:
        raise FerryError(
            "X_IDEMPOTENCY_REQUIRED",
            f'job "{definition.name}" produced idempotency key {quoted(key)} for its input',
            "make idempotency_key return a non-empty string naming the work, "
            'e.g. f"onboard:{i.org_id}"',
        )
    return key


def checked_priority(priority: object, *, field: str) -> int:
    """``priority`` if it is a whole number a run can store: the PostgreSQL ``integer``
    column holding it (the Redis claim reads it back as a number too); else
    ``X_OUT_OF_RANGE`` naming ``field``."""
    return bounded_int(
        priority,
        field=field,
        low=INT32_MIN,
        high=INT32_MAX,
        fix="give priority a whole number; higher runs first, 0 is the default",
    )


def build_request(
    definition: JobDefinition[Any, Any],
    value: Any,
    *,
    run_at_ms: int | None = None,
    queue: str | None = None,
    priority: int | None = None,
    connection: Any = None,
    actor: str | None = None,
    key_prefix: str | None = None,
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
) -> EnqueueRequest:
    """Validate, key and serialise one input into the row the driver writes.

    Every rule a driver's storage has is checked here, the same for every driver, so a
    refused input reaches no queue: text without NUL or lone surrogates, keys that fit an
    index, names that are names, and a payload of at most ``max_payload_bytes``.
    """
    parsed = parse_input(definition, value)
    job = f'job "{definition.name}"'
    key = idempotency_key_of(definition, parsed)
    idempotency_key = checked_key(
        f"{key_prefix}:{key}" if key_prefix else key,
        what=f"{job} idempotency key",
        code="X_IDEMPOTENCY_KEY_INVALID",
    )
    concurrency = definition.concurrency
    concurrency_key = None
    if concurrency is not None:
        concurrency_key = definition.name
        if concurrency.key is not None:
            concurrency_key = f"{definition.name}:{concurrency.key(parsed)}"
        checked_key(concurrency_key, what=f"{job} concurrency key", code="X_INVARIANT")
    rate = definition.rate
    rate_key = None
    if rate is not None:
        rate_key = definition.name if rate.key is None else f"{definition.name}:{rate.key(parsed)}"
        checked_key(rate_key, what=f"{job} rate key", code="X_RATE_INVALID")
    tenant = definition.tenant(parsed) if definition.tenant is not None else None
    payload, payload_json = to_json_text(parsed, what="input", max_bytes=max_payload_bytes)
    return EnqueueRequest(
        name=definition.name,
        queue=definition.queue if queue is None else check_name(queue, what="enqueue queue"),
        payload=payload,
        payload_json=payload_json,
        idempotency_key=idempotency_key,
        max_attempts=definition.retry.attempts,
        run_at_ms=run_at_ms,
        tenant=None if tenant is None else check_name(tenant, what=f"{job} tenant"),
        actor=actor,
        concurrency_key=concurrency_key,
        rate_key=rate_key,
        priority=definition.priority
        if priority is None
        else checked_priority(priority, field="enqueue priority"),
        connection=connection if connection is not None else _connection.get(),
        traceparent=current_traceparent(),
        # A scoped key dedupes against every stored run, whatever the job's rule: a tick's
        # (scoped to its occurrence) absorbs a second scheduler firing that occurrence, a
        # fan-out child's (scoped to its parent run and step) is what the parent's retry
        # finds — a finished occurrence or child must not run again.
        dedupe=definition.dedupe if key_prefix is None else RETAINED,
    )


def resolve_run_at(
    driver: JobDriver, run_at: datetime | None, delay: Duration | None
) -> int | None:
    """``run_at``/``delay`` as an instant on the driver's clock (``None``: now)."""
    if run_at is not None and delay is not None:
        raise FerryError(
            "X_INVARIANT",
            "enqueue was given both run_at and delay",
            "pass one of them: run_at for an instant, delay for a duration from now",
        )
    if run_at is not None:
        if run_at.tzinfo is None:
            raise FerryError(
                "X_INVARIANT",
                f"enqueue run_at {run_at.isoformat()} has no time zone",
                "pass an aware datetime, e.g. datetime.now(UTC) + timedelta(hours=1)",
            )
        due = (run_at - _EPOCH) // timedelta(milliseconds=1)  # exact, unlike a float
        return check_instant_ms(due, field="enqueue run_at")
    if delay is not None:
        due = driver.clock.now_ms() + to_ms(delay, what="enqueue delay")
        return check_instant_ms(due, field="enqueue delay")
    return None


async def enqueue(
    definition: JobDefinition[Any, Any],
    value: Any,
    *,
    run_at: datetime | None = None,
    delay: Duration | None = None,
    queue: str | None = None,
    priority: int | None = None,
    connection: Any = None,
    actor: str | None = None,
    key_prefix: str | None = None,
) -> EnqueueResult:
    """Validate and queue one run through the configured driver (``priority`` overrides
    the declaration's for this run)."""
    driver = current_job_driver()
    serve()  # sync callers without a connection of their own are sent to this loop
    request = build_request(
        definition,
        value,
        run_at_ms=resolve_run_at(driver, run_at, delay),
        queue=queue,
        priority=priority,
        connection=connection,
        actor=actor,
        key_prefix=key_prefix,
        max_payload_bytes=driver.max_payload_bytes,
    )
    return await driver.enqueue(request)


async def enqueue_many(
    definition: JobDefinition[Any, Any],
    values: Sequence[Any],
    *,
    queue: str | None = None,
    connection: Any = None,
    actor: str | None = None,
) -> list[EnqueueResult]:
    """Validate every input first, then queue them all in one round trip."""
    driver = current_job_driver()
    serve()
    requests = [
        build_request(
            definition,
            value,
            queue=queue,
            connection=connection,
            actor=actor,
            max_payload_bytes=driver.max_payload_bytes,
        )
        for value in values
    ]
    return await driver.enqueue_many(requests) if requests else []


def enqueue_sync(
    definition: JobDefinition[Any, Any],
    value: Any,
    *,
    run_at: datetime | None = None,
    delay: Duration | None = None,
    queue: str | None = None,
    priority: int | None = None,
    connection: Any = None,
    actor: str | None = None,
) -> EnqueueResult:
    """``enqueue`` for sync code: through the caller's blocking connection on this thread,
    inside its transaction; without one, on the loop the driver serves."""
    connection = default_connection(connection if connection is not None else _connection.get())
    return run_sync(
        lambda: enqueue(
            definition,
            value,
            run_at=run_at,
            delay=delay,
            queue=queue,
            priority=priority,
            connection=connection,
            actor=actor,
        ),
        joined=connection is not None,
        what=f'enqueue_sync of job "{definition.name}"',
    )


def enqueue_many_sync(
    definition: JobDefinition[Any, Any],
    values: Sequence[Any],
    *,
    queue: str | None = None,
    connection: Any = None,
    actor: str | None = None,
) -> list[EnqueueResult]:
    """``enqueue_many`` for sync code, the way ``enqueue_sync`` runs."""
    connection = default_connection(connection if connection is not None else _connection.get())
    return run_sync(
        lambda: enqueue_many(definition, values, queue=queue, connection=connection, actor=actor),
        joined=connection is not None,
        what=f'enqueue_many_sync of job "{definition.name}"',
    )
