"""``define_api``: stamp export names on handles and resolve names back to jobs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ferry._jobs.declaration import JobHandle, declared_jobs
from ferry._jobs.definition import JobDefinition
from ferry.errors import FerryError


@dataclass(frozen=True)
class Api:
    """The jobs and tasks an application hands over, by name."""

    jobs: dict[str, JobHandle[Any, Any]] = field(default_factory=dict)
    tasks: dict[str, Any] = field(default_factory=dict)


def define_api(
    *, jobs: Iterable[ModuleType | object] = (), tasks: Iterable[ModuleType | object] = ()
) -> Api:
    """Name every handle after its export: an explicit ``name=`` wins, and a handle nobody
    hands over keeps its ``anonymous-*-<n>`` name. Two handles on one name are refused."""
    api = Api()
    for handle, export in _exports(jobs, JobHandle):
        if handle.actor is not None:
            continue  # an as_actor view is the same job under another export, not a name
        _stamp(handle.definition, export)
        _register(api.jobs, handle.name, handle, "job")
    from ferry.tasks._declaration import TaskHandle

    for task_handle, export in _exports(tasks, TaskHandle):
        task_handle.stamp_name(export)
        _register(api.tasks, task_handle.name, task_handle, "task")
    return api


def resolve_job(name: str, api: Api | None = None) -> JobDefinition[Any, Any] | None:
    """The declaration a queued run of ``name`` belongs to, if this process has it."""
    if api is not None:
        handle = api.jobs.get(name)
        return handle.definition if handle is not None else None
    for definition in declared_jobs():
        if definition.name == name:
            return definition
    return None


def _exports(sources: Iterable[ModuleType | object], kind: type[Any]) -> list[tuple[Any, str]]:
    found: list[tuple[Any, str]] = []
    for source in sources:
        if isinstance(source, kind):
            found.append((source, source.name))
            continue
        for export, value in vars(source).items():
            if isinstance(value, kind) and not export.startswith("_"):
                found.append((value, export))
    return found


def _stamp(definition: JobDefinition[Any, Any], export: str) -> None:
    if not definition.explicit_name:
        definition.name = export


def _register(table: dict[str, Any], name: str, handle: Any, kind: str) -> None:
    existing = table.get(name)
    if existing is not None and existing is not handle:
        raise FerryError(
            "X_INVARIANT",
            f'two {kind}s are named "{name}"',
            "give one of them its own name= — the name is a durable queue key",
        )
    table[name] = handle
