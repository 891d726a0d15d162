"""Finding the application: ``--app module[:attribute]`` or ``FERRY_APP``."""

from __future__ import annotations

import importlib
import os
import sys

from ferry._jobs.registry import Api, define_api
from ferry.errors import FerryError


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
        raise FerryError(
            "X_INVARIANT",
            f"application module {module_name!r} could not be imported ({missing})",
            "run from the directory that contains the package, or install it",
        ) from None
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
