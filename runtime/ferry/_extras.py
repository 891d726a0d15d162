"""The optional parts of ferry and the refusal when one is not installed.

``pip install ferry`` brings what a PostgreSQL application needs to enqueue and work
jobs; each heavier dependency comes with an extra (``pip install 'ferry[dashboard]'``).
A feature that needs an extra asks for it here before it imports anything of it, so a
missing package is refused by name — which extra, which feature, the pip command —
instead of surfacing as an ``ImportError`` from deep inside the feature.
"""

from __future__ import annotations

import importlib

from ferry.errors import FerryError

EXTRAS: dict[str, tuple[str, ...]] = {
    "sqlite": ("aiosqlite",),
    "redis": ("redis",),
    "dashboard": ("starlette", "uvicorn", "jinja2", "python_multipart"),
    "mcp": ("mcp", "starlette", "uvicorn"),
    "embedded": ("pgserver",),
    "uvloop": ("uvloop",),
    "django": ("django", "psycopg"),
}
"""Each extra a feature asks for, and the modules it must make importable (the packages'
import names). ``otel`` is not here: without opentelemetry-api no tracer provider can be
installed, so there is no span to open and nothing to refuse (``ferry._jobs.tracing``)."""


def require_extra(extra: str, *, feature: str) -> None:
    """Import what ``extra`` brings, or refuse ``feature`` with ``X_EXTRA_MISSING``."""
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as missing:
            raise extra_missing(extra, feature=feature, module=missing.name or module) from None


def extra_missing(extra: str, *, feature: str, module: str) -> FerryError:
    """The refusal of ``feature`` while ``module`` (of ``ferry[extra]``) is not installed."""
    return FerryError(
        "X_EXTRA_MISSING",
        f"{feature} needs the ferry[{extra}] extra, and its module {module!r} is not installed",
        f"pip install 'ferry[{extra}]'",
    )
