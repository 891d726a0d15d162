"""What ``@job`` declared: the definition the worker, the facade and the handle share.

Its own module so that the enqueue facade and the handle both import it, and neither
imports the other back.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError

from ferry._jobs.policy import Concurrency, RateLimit, Retry
from ferry.drivers.capabilities import RATES, Capability
from ferry.drivers.protocol import Dedupe
from ferry.errors import FerryError

InputT = TypeVar("InputT", bound=BaseModel)
ResultT = TypeVar("ResultT")

#: The keyword parameters a body may declare; it gets exactly the ones it names.
BODY_PARAMETERS = frozenset({"input", "step", "ctx", "progress", "final_attempt", "attempt"})

_anonymous_jobs = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Settled(Generic[InputT, ResultT]):
    """One ending of a run, handed to ``on_settled`` exactly once.

    ``input`` is ``None`` only when the stored payload no longer fits the input schema;
    ``result`` is what the body returned (completed runs only), as it returned it.
    """

    outcome: Literal["completed", "failed", "cancelled"]
    job_id: str
    attempt: int
    input: InputT | None
    result: ResultT | None
    code: str | None
    message: str | None


OnSettled = Callable[[Settled[Any, Any]], Awaitable[None] | None]


class JobDefinition(Generic[InputT, ResultT]):
    """Everything ``@job`` declared; shared by a handle and its ``as_actor`` views."""

    def __init__(
        self,
        *,
        body: Callable[..., Awaitable[ResultT]] | Callable[..., ResultT],
        input_model: type[InputT],
        idempotency_key: Callable[[InputT], str],
        tenant: Callable[[InputT], str | None] | None,
        retry: Retry,
        timeout_ms: int | None,
        queue: str,
        concurrency: Concurrency[InputT] | None,
        rate: RateLimit[InputT] | None,
        on_settled: OnSettled | None,
        name: str | None,
        priority: int,
        dedupe: Dedupe,
    ) -> None:
        self.body = body
        self.body_parameters = _body_parameters(body)
        self.sync = not inspect.iscoroutinefunction(body)
        """A ``def`` body: it runs on the worker's thread pool, its steps on that thread."""
        self.input_model = input_model
        self.idempotency_key = idempotency_key
        self.tenant = tenant
        self.retry = retry
        self.timeout_ms = timeout_ms
        self.queue = queue
        self.concurrency = concurrency
        self.rate = rate
        self.on_settled = on_settled
        self.explicit_name = name is not None
        self.name = name if name is not None else f"anonymous-job-{next(_anonymous_jobs)}"
        self.priority = priority
        self.dedupe = dedupe
        """Which stored run of a key an enqueue of it dedupes against (``dedupe=``)."""
        self.needs: tuple[Capability[Any], ...] = (RATES,) if rate is not None else ()
        """Driver capabilities the job needs (its rate limit's windows; a factory over
        ``job()`` sets the body's: a webhook's ledger, a backfill's checkpoints); the worker
        refuses at start on a driver without one (``X_DRIVER_CAPABILITY``)."""

    def read_result(self, stored: Any, *, job_id: str) -> ResultT:
        """A stored result (JSON) as the type the body's return annotation declares: a
        model, a UUID, a datetime read back from their JSON forms; as stored when the body
        declares none (or ``Any``). ``X_VALIDATION`` when the stored value no longer fits
        the annotation (the body's return type changed since the run completed)."""
        adapter = self._result_adapter
        if adapter is None:
            return stored  # type: ignore[no-any-return]
        try:
            return adapter.validate_python(stored)  # type: ignore[no-any-return]
        except ValidationError as invalid:
            raise FerryError(
                "X_VALIDATION",
                f'stored result of run {job_id} no longer matches job "{self.name}"\'s return '
                f"type {_shown(self._result_type())}: {invalid.error_count()} error(s), first: "
                f"{invalid.errors()[0]['msg']}",
                "read the run's raw result with `ferry jobs show <id> --json`, or make the "
                "return type accept results stored before it changed",
            ) from None

    @functools.cached_property
    def _result_adapter(self) -> TypeAdapter[Any] | None:
        """A validator for the declared return type, built on first use (None: untyped)."""
        declared = self._result_type()
        if declared in (Any, object):
            return None
        try:
            return TypeAdapter(declared)
        except PydanticSchemaGenerationError:
            raise FerryError(
                "X_INVARIANT",
                f'job "{self.name}" declares return type {_shown(declared)}, which has no '
                "JSON form to read a stored result back into",
                "return a pydantic model, JSON values (dict, list, str, int, float, bool, "
                "None) or UUID/datetime/Decimal/enum values, and annotate it so",
            ) from None

    def _result_type(self) -> Any:
        """The body's return annotation, resolved (``Any`` when it has none)."""
        try:
            hints = typing.get_type_hints(self.body)
        except Exception as unresolved:  # a name only the body's own scope knew
            raise FerryError(
                "X_INVARIANT",
                f'job "{self.name}"\'s return annotation cannot be resolved: {unresolved}',
                "define the types a job body names at module level, where its annotations "
                "can be read back",
            ) from None
        return hints.get("return", Any)


def _shown(declared: Any) -> str:
    return getattr(declared, "__name__", None) or repr(declared)


def _body_parameters(body: Callable[..., Any]) -> tuple[str, ...]:
    if not inspect.isfunction(body) and not inspect.ismethod(body):
        raise FerryError(
            "X_INVARIANT",
            f"job body {body!r} is not a function",
            "declare the body with `async def` (or `def` for blocking code) under @job(...)",
        )
    if inspect.isgeneratorfunction(body) or inspect.isasyncgenfunction(body):
        raise FerryError(
            "X_INVARIANT",
            f"job body {body.__qualname__!r} is a generator function: it would return a "
            "generator, not run",
            "return the result instead of yielding it",
        )
    names: list[str] = []
    for parameter in inspect.signature(body).parameters.values():
        if parameter.name not in BODY_PARAMETERS or parameter.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            raise FerryError(
                "X_INVARIANT",
                f"job body {body.__qualname__!r} declares parameter {parameter.name!r}, "
                "which ferry does not provide",
                f"declare only some of: {', '.join(sorted(BODY_PARAMETERS))}",
            )
        names.append(parameter.name)
    return tuple(names)
