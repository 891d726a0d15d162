"""``--app ferry.contrib.django.app``: the discovered ``Api`` as the ferry CLI loads apps."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "api":
        from ferry.contrib.django.apps import api

        return api()
    raise AttributeError(name)
