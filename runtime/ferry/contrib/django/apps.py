"""The app config: the driver on the project's database, the jobs and tasks of its apps.

Discovery imports ``<app>.jobs`` and ``<app>.tasks`` for every installed app (those that
have them) and hands the modules to ``define_api``, so every job and task is named after
its export, exactly as ``define_api(jobs=[...], tasks=[...])`` would name it; the worker,
the scheduler, the dashboard and the test helper all read that one ``Api``.
"""

from __future__ import annotations

import importlib
from typing import Any

from django.apps import AppConfig, apps
from django.db import close_old_connections

from ferry._app import Api, define_api
from ferry._bridge import set_default_connection
from ferry._jobs.facade import set_job_driver
from ferry._jobs.threads import after_each_work
from ferry.contrib.django.settings import dsn_of, ferry_settings
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.errors import FerryError

_api: Api | None = None
_driver: PostgresJobDriver | None = None


class FerryConfig(AppConfig):
    """``"ferry.contrib.django"`` in ``INSTALLED_APPS``."""

    name = "ferry.contrib.django"
    label = "ferry"
    verbose_name = "ferry"

    def ready(self) -> None:
        global _api, _driver
        settings = ferry_settings()
        from django.db import connections

        database = connections[settings.database]
        if settings.database_url is None and database.vendor != "postgresql":
            raise FerryError(
                "X_DRIVER_NO_TRANSACTIONS",
                f'the Django database "{settings.database}" is {database.vendor}, and ferry '
                "joins Django transactions on PostgreSQL only",
                'point settings.FERRY["DATABASE"] at a PostgreSQL alias, or give '
                'settings.FERRY["DATABASE_URL"] for a queue of its own (then enqueues do not '
                "join Django's transactions)",
            )
        _api = discover()
        _driver = postgres_job_driver(database_url(), schema=settings.schema)
        set_job_driver(_driver)
        # A sync job body's thread gives back its Django connection as a request would.
        after_each_work(close_old_connections)
        if settings.database_url is None:
            # Sync enqueues and outbox appends join Django's own connection (and so
            # transaction.atomic()) unless they are handed another one.
            set_default_connection(lambda: connections[settings.database])


def discover() -> Api:
    """``define_api`` over the ``jobs`` and ``tasks`` modules of every installed app."""
    jobs: list[Any] = []
    tasks: list[Any] = []
    for config in apps.get_app_configs():
        for name, found in (("jobs", jobs), ("tasks", tasks)):
            module = _submodule(config.name, name)
            if module is not None:
                found.append(module)
    return define_api(jobs=jobs + tasks, tasks=tasks + jobs)


def _submodule(package: str, name: str) -> Any:
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as missing:
        if missing.name == f"{package}.{name}":
            return None
        raise  # the module exists and something it imports is missing: say so


def api() -> Api:
    """The project's jobs and tasks, by name (once Django is set up)."""
    if _api is None:
        raise _not_ready()
    return _api


def driver() -> PostgresJobDriver:
    """The project's driver (once Django is set up)."""
    if _driver is None:
        raise _not_ready()
    return _driver


def database_url() -> str:
    """The queue's DSN: ``settings.FERRY["DATABASE_URL"]``, else the Django database's as
    it is now (under a test runner, the test database's)."""
    from django.db import connections

    settings = ferry_settings()
    return settings.database_url or dsn_of(connections[settings.database].settings_dict)


def _not_ready() -> FerryError:
    return FerryError(
        "X_DRIVER_UNSET",
        "ferry.contrib.django was used before Django set up its apps",
        'add "ferry.contrib.django" to INSTALLED_APPS and call django.setup() first '
        "(manage.py and the test runners do)",
    )
