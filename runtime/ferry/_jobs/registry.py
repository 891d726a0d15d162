"""Resolving a queued run's name back to the job this process declared."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferry._jobs.declaration import JobHandle, declared_jobs
from ferry._jobs.definition import JobDefinition


def resolve_job(
    name: str, jobs: Mapping[str, JobHandle[Any, Any]] | None = None
) -> JobDefinition[Any, Any] | None:
    """The declaration a queued run of ``name`` belongs to: among ``jobs`` (an
    application's, by name) when given, else among every job this process declared."""
    if jobs is not None:
        handle = jobs.get(name)
        return handle.definition if handle is not None else None
    for definition in declared_jobs():
        if definition.name == name:
            return definition
    return None
