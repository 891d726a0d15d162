"""The values of a fan-out: the children ``step.enqueue`` wrote, and each one's outcome as
``step.wait`` returns it.

Both are memoized as JSON step results (the children's jobs and ids; each outcome with
its stored result), so a replay returns the same values without reading any child again —
a child may even have been pruned by then. A child's result is typed on the way out by its
job's return annotation, exactly as ``handle.result`` types it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, overload

from typing_extensions import TypeVar

from ferry._jobs.definition import JobDefinition
from ferry._jobs.registry import resolve_job
from ferry._payload import JsonValue
from ferry.drivers.protocol import RunStatus
from ferry.errors import FerryError

R = TypeVar("R", default=Any)
"""What the children's bodies return."""

Ending = Literal["completed", "dead", "cancelled"]


@dataclass(frozen=True, slots=True)
class Child(Generic[R]):
    """One run a fan-out enqueued: its job and its id."""

    job: str
    job_id: str
    definition: JobDefinition[Any, R] | None = field(default=None, compare=False, repr=False)
    """The job's declaration in this process (what types its result), if it declares it."""


class Children(Sequence[Child[R]]):
    """The runs ``step.enqueue`` enqueued, in the order they were given: what
    ``step.wait`` takes."""

    __slots__ = ("_children", "step")

    def __init__(self, step: str, children: Sequence[Child[R]]) -> None:
        self.step = step
        """The name of the ``step.enqueue`` that wrote them."""
        self._children = tuple(children)

    @property
    def ids(self) -> list[str]:
        """The children's run ids, in order."""
        return [child.job_id for child in self._children]

    def definition_of(self, job: str) -> JobDefinition[Any, R] | None:
        """The declaration of the children's job ``job`` (what types its results), if
        this process declares it."""
        for child in self._children:
            if child.job == job and child.definition is not None:
                return child.definition
        return resolve_job(job)

    @overload
    def __getitem__(self, index: int) -> Child[R]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Child[R]]: ...

    def __getitem__(self, index: int | slice) -> Child[R] | Sequence[Child[R]]:
        return self._children[index]

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self) -> Iterator[Child[R]]:
        return iter(self._children)

    def __repr__(self) -> str:
        return f"<children of step {self.step!r}: {len(self)} run(s)>"

    def to_json(self) -> JsonValue:
        """As ``step.enqueue`` records them."""
        return [{"job": child.job, "id": child.job_id} for child in self._children]

    @classmethod
    def from_json(
        cls, step: str, recorded: JsonValue, jobs: Mapping[str, JobDefinition[Any, Any]]
    ) -> Children[Any]:
        """As recorded, each child's declaration looked up in ``jobs`` (the ones the call
        names), then among every job this process declares."""
        return cls(
            step,
            [
                Child(
                    entry["job"], entry["id"], jobs.get(entry["job"]) or resolve_job(entry["job"])
                )
                for entry in recorded
            ],
        )


@dataclass(frozen=True, slots=True)
class ChildOutcome(Generic[R]):
    """How one child ended, as ``step.wait`` returns it: ``completed`` with its ``result``
    (typed by its job's return annotation), ``dead`` with the ``code`` and ``message`` of
    its last error, or ``cancelled``."""

    job: str
    job_id: str
    state: Ending
    result: R | None
    code: str | None
    message: str | None


def outcome_json(child: Child[Any], status: RunStatus | None) -> JsonValue:
    """An ended child's outcome as ``step.wait`` records it (its result as stored)."""
    if status is None:
        raise FerryError(
            "X_RUN_NOT_FOUND",
            f'child run {child.job_id} of job "{child.job}" is gone (a drain moved it, or '
            "it was deleted by hand): its outcome cannot be read",
            "children stay until their parent ends; keep a fan-out's runs on one store",
        )
    error = status.last_error
    return {
        "id": child.job_id,
        "job": child.job,
        "state": status.state,
        "result": status.result if status.state == "completed" else None,
        "code": error.code if error is not None and status.state != "completed" else None,
        "message": error.message if error is not None and status.state != "completed" else None,
    }


def outcome_of(
    definition_of: Callable[[str], JobDefinition[Any, R] | None], recorded: JsonValue
) -> ChildOutcome[R]:
    """A recorded outcome, its result read back by its job's declaration (found by
    ``definition_of`` from the job's name; untyped when this process declares none)."""
    result = recorded["result"]
    definition = definition_of(recorded["job"]) if recorded["state"] == "completed" else None
    if definition is not None:
        result = definition.read_result(result, job_id=recorded["id"])
    return ChildOutcome(
        job=recorded["job"],
        job_id=recorded["id"],
        state=recorded["state"],
        result=result,
        code=recorded["code"],
        message=recorded["message"],
    )
