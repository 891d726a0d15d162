"""The application: its jobs and tasks by name (``define_api``), and finding it
(``--app module[:attribute]`` or ``FERRY_APP``).

It stands above both the jobs and the tasks, so neither imports the other to be named.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ferry._jobs.declaration import JobHandle
from ferry._jobs.definition import JobDefinition
from ferry.errors import FerryError
from ferry.tasks._declaration import TaskHandle


@dataclass(frozen=True)
class Api:
    """The jobs and tasks an application hands over, by name."""

    jobs: dict[str, JobHandle[Any, Any]] = field(default_factory=dict)
    tasks: dict[str, TaskHandle] = field(default_factory=dict)


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
    for task_handle, export in _exports(tasks, TaskHandle):
        task_handle.stamp_name(export)
        _register(api.tasks, task_handle.name, task_handle, "task")
    return api


def load_app(spec: str | None) -> Api:
    """Import the app module and return its ``Api`` (``define_api`` result).

    ``module:attr`` names the Api; a bare module uses its ``api`` attribute, or hands the
    whole module to ``define_api`` when it has none.
    """
    spec = spec or os.environ.get("FERRY_APP")
    if not spec:
        raise FerryError(
            "X_INVARIANT",
            "no application was named, so there are no jobs to run",
            "pass --app my_app.jobs (or my_app:api), or set FERRY_APP",
        )
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as missing:
        if _is_the_app(missing, module_name):
            raise FerryError(
                "X_INVARIANT",
                f"application module {module_name!r} could not be imported ({missing})",
                "run from the directory that contains the package, or install it",
            ) from None
        raise _import_failed(module_name, missing) from missing
    except Exception as error:  # a SyntaxError, a failing import, anything it raised
        raise _import_failed(module_name, error) from error
    found = getattr(module, attribute or "api", None)
    if isinstance(found, Api):
        return found
    if attribute:
        raise FerryError(
            "X_INVARIANT",
            f"{spec!r} is not a ferry Api (got {type(found).__name__})",
            "point --app at the result of define_api(...), e.g. my_app:api",
        )
    return define_api(jobs=[module], tasks=[module])


def _is_the_app(missing: ModuleNotFoundError, module_name: str) -> bool:
    """Whether the module not found is the app itself (or a package it lives in), rather
    than something the app imports."""
    name = missing.name or ""
    return module_name == name or module_name.startswith(f"{name}.")


def _import_failed(module_name: str, error: BaseException) -> FerryError:
    """``X_APP_IMPORT``: the app was found but raised while importing, with where and the
    whole traceback (``detail``) — the real cause, not a hint about the working directory."""
    where = _where(error)
    missing = error.name if isinstance(error, ModuleNotFoundError) else None
    fix = (
        f"install the package {missing!r} the application imports, in this environment"
        if missing
        else f"fix the error{f' at {where}' if where else ''} (its traceback is printed above)"
    )
    return FerryError(
        "X_APP_IMPORT",
        f"application module {module_name!r} raised while it was imported: "
        f"{type(error).__name__}: {error}" + (f" ({where})" if where else ""),
        fix,
        detail="".join(traceback.format_exception(error)),
    )


def _where(error: BaseException) -> str | None:
    """``file:line`` of the failure: a syntax error's own position, else the innermost frame."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}"
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<frozen ") and frame.filename != __file__
    ]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


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
