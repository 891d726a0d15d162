"""Named Lua: every script of the driver, read from ``lua/<name>.lua`` and called by name.

Each script is ``lib.lua`` (key names, the run's indexes, slots, the fence), any library a
``--! include <name>`` line asks for, then the file itself; loaded by SHA on first call
(``EVALSHA``, with ``SCRIPT LOAD`` when the server does not know it, e.g. after a
restart). A reviewer reads the claim in one place: ``lua/runs.lua``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

_INCLUDE = "--! include "


class Scripts:
    """The driver's scripts, registered with its client, run under its key prefix."""

    def __init__(self, client: Redis, tag: str) -> None:
        self._tag = tag
        self._scripts = {name: client.register_script(text) for name, text in sources().items()}

    async def run(self, name: str, *args: str | int) -> Any:
        """Run script ``name`` with ``args`` (its ARGV); KEYS is the prefix's hash tag."""
        script: AsyncScript = self._scripts[name]
        return await script(keys=[self._tag], args=list(args))


@cache
def sources() -> Mapping[str, str]:
    """Every entry script, assembled, by file stem; read once per process."""
    folder = resources.files("ferry.drivers._redis.lua")
    files = {
        entry.name.removesuffix(".lua"): entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".lua")
    }
    libraries = {"lib", "runs", "prune_runs"}
    assembled = {}
    for name, text in files.items():
        if name in libraries:
            continue
        included = [
            files[line.removeprefix(_INCLUDE).strip()]
            for line in text.splitlines()
            if line.startswith(_INCLUDE)
        ]
        assembled[name] = "\n".join([files["lib"], *included, text])
    return assembled
