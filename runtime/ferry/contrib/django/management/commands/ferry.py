"""``manage.py ferry <command> ...``: the ferry CLI on the project's database and jobs.

``manage.py ferry worker``, ``scheduler``, ``dev``, ``relay``, ``migrate``, ``jobs ls`` …
take the same options as ``ferry <command>``; ``DATABASE_URL``, ``FERRY_SCHEMA`` and the
app (the jobs and tasks the app config discovered) come from the project's settings.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ferry.contrib.django.apps import database_url
from ferry.contrib.django.settings import ferry_settings

_TAKES_APP = {"worker", "scheduler", "dev", "relay", "run", "mcp", "admin", "tasks"}


class Command(BaseCommand):
    help = "Run a ferry command (worker, scheduler, dev, migrate, …) on this project."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("words", nargs=argparse.REMAINDER, help="the ferry command line")

    def handle(self, *args: Any, **options: Any) -> None:
        from ferry._cli import main

        words: list[str] = list(options["words"])
        if not words:
            raise CommandError("name a ferry command: worker, scheduler, dev, migrate, …")
        # The project's settings are the one source: the database (under the test runner,
        # the test database) and the schema are theirs, whatever the environment says.
        os.environ["DATABASE_URL"] = database_url()
        os.environ["FERRY_SCHEMA"] = ferry_settings().schema
        if words[0] in _TAKES_APP and "--app" not in words:
            os.environ.setdefault("FERRY_APP", "ferry.contrib.django.app")
        code = main(words)
        if code:
            raise CommandError(f"ferry {words[0]} exited with {code}", returncode=code)
