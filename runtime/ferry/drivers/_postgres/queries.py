"""Named SQL: every statement of the driver, read from ``sql/queries/<name>.sql``.

The Python side calls a statement by its name, so a reviewer reads the claim query in
one place (a part several statements share is a fragment, ``ferry.drivers._sql``). A file
may use placeholders, substituted once per schema: ``{schema}`` (the quoted schema
identifier), ``{channel}``, ``{outbox_channel}`` and ``{ended_channel}`` (the NOTIFY
channels of runs, of outbox entries and of runs ending, as SQL literals),
``{ready_lookahead_ms}`` (``READY_LOOKAHEAD_MS``).
Substitution is safe because ``checked_schema`` admits only ``[a-z0-9_]`` names.
Besides its own files the driver runs the statements both SQL dialects share
(``ferry.drivers._stores``), whose parameters are named (``:name``): those become ``$n``
here, once, and ``bind`` lays a call's named values out in that order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ferry.drivers._stores.statements import statement_files
from ferry.errors import FerryError

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_CHANNEL_SUFFIX = "_jobs"
_OUTBOX_CHANNEL_SUFFIX = "_outbox"
_ENDED_CHANNEL_SUFFIX = "_ended"  # no longer than the others: it must not shorten schema names
_LONGEST_SUFFIX = max(len(_CHANNEL_SUFFIX), len(_OUTBOX_CHANNEL_SUFFIX), len(_ENDED_CHANNEL_SUFFIX))
_MAX_IDENTIFIER = 63  # PostgreSQL's NAMEDATALEN - 1; a longer NOTIFY channel is refused
_NAMED = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")  # :name, never a ::cast

READY_LOOKAHEAD_MS = 30_000
"""A run due within this of now is ready in the rotating partitions claims read; one due
later waits in ``ready_later`` until promotion (``ferry.drivers._postgres.ready``), so
rotations never copy the runs sleeping for days. Far longer than a tending interval: a
run is promoted long before it falls due. Migration 0030's trigger is rendered with it: a
new value reaches a store's trigger only through a migration that recreates it."""


def checked_schema(schema: str) -> str:
    """``schema`` if it is a plain lower-case identifier ferry can quote and notify on."""
    if not _SCHEMA_NAME.match(schema):
        raise FerryError(
            "X_INVARIANT",
            f"postgres schema name {schema!r} is not a plain lower-case identifier",
            'use letters a-z, digits and "_", starting with a letter or "_", e.g. schema="ferry"',
        )
    if len(schema) + _LONGEST_SUFFIX > _MAX_IDENTIFIER:
        raise FerryError(
            "X_INVARIANT",
            f"postgres schema name {schema!r} is too long for its notify channels "
            f'"{channel_for(schema)}" and "{outbox_channel_for(schema)}" '
            f"({_MAX_IDENTIFIER} characters at most)",
            f"use a schema name of at most {_MAX_IDENTIFIER - _LONGEST_SUFFIX} characters",
        )
    return schema


def channel_for(schema: str) -> str:
    """The LISTEN/NOTIFY channel that announces new runs of ``schema``."""
    return f"{schema}{_CHANNEL_SUFFIX}"


def outbox_channel_for(schema: str) -> str:
    """The LISTEN/NOTIFY channel that announces committed outbox entries of ``schema``."""
    return f"{schema}{_OUTBOX_CHANNEL_SUFFIX}"


def ended_channel_for(schema: str) -> str:
    """The LISTEN/NOTIFY channel that announces the runs of ``schema`` each statement ended
    (payload: their ids, comma-separated): what result waiters listen on."""
    return f"{schema}{_ENDED_CHANNEL_SUFFIX}"


class Queries:
    """The driver's statements rendered for one schema, by name."""

    def __init__(self, schema: str) -> None:
        self.schema = checked_schema(schema)
        self.channel = channel_for(schema)
        self.outbox_channel = outbox_channel_for(schema)
        self.ended_channel = ended_channel_for(schema)
        self._rendered = {
            name: positional(self.render(text))
            for name, text in statement_files("ferry.drivers._postgres.sql.queries").items()
        }

    def __getitem__(self, name: str) -> str:
        return self._rendered[name][0]

    def bind(self, name: str, parameters: Mapping[str, object]) -> tuple[str, list[object]]:
        """Statement ``name`` and its ``$n`` arguments, from named ``parameters``."""
        sql, names = self._rendered[name]
        return sql, [parameters[n] for n in names]

    def render(self, sql: str) -> str:
        """``sql`` with this schema's identifier, its channels and the ready lookahead
        substituted."""
        return (
            sql.replace("{schema}", f'"{self.schema}"')
            .replace("{outbox_channel}", f"'{self.outbox_channel}'")
            .replace("{ended_channel}", f"'{self.ended_channel}'")
            .replace("{channel}", f"'{self.channel}'")
            .replace("{ready_lookahead_ms}", str(READY_LOOKAHEAD_MS))
        )


def positional(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with its named parameters as ``$n`` (comments left as written), and the
    names in ``$n`` order; a statement written with ``$n`` has no names."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match[1] not in names:
            names.append(match[1])
        return f"${names.index(match[1]) + 1}"

    lines = []
    for line in sql.splitlines():
        code, dashes, comment = line.partition("--")
        lines.append(_NAMED.sub(number, code) + dashes + comment)
    return "\n".join(lines), tuple(names)
