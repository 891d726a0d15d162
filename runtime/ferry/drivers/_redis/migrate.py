"""Keyspace migrations: ``lua/migrations/NNNN_name.lua``, applied in order, recorded once.

A Redis store has no schema, but the shape of its keys changes between releases like a
schema does, so it keeps the same ledger the SQL drivers keep (``ferry.drivers._ledger``):
the hash ``{prefix}:migrations`` (version -> ``name|checksum|applied_at_ms``), judged at
start the same way (``X_SCHEMA_NEWER``, ``X_SCHEMA_DRIFT``). A store written before the
ledger existed has none and gets every migration; each migration is one script — atomic on
the server — that checks the ledger, moves the keys, and records itself, so processes
starting together apply it exactly once.
"""

from __future__ import annotations

from importlib import resources
from typing import cast

from redis.asyncio import Redis

from ferry._clock import Clock
from ferry.drivers._ledger import LedgerPlace, LedgerRow, LedgerState, Migration, judge
from ferry.drivers._ledger import shipped_migrations as _shipped
from ferry.drivers._redis.keyspace import Keyspace

_APPLY = """
if redis.call('HEXISTS', key('migrations'), ARGV[1]) == 1 then return 0 end
{migration}
redis.call('HSET', key('migrations'), ARGV[1], ARGV[2] .. '|' .. ARGV[3] .. '|' .. ARGV[4])
return 1
"""


def known_migrations() -> tuple[Migration, ...]:
    """Every keyspace migration this ferry ships for Redis, in version order."""
    return _shipped("ferry.drivers._redis.lua.migrations", ".lua")


async def read_ledger(client: Redis, keys: Keyspace) -> LedgerState:
    """The store's ledger judged against the shipped migrations (nothing written)."""
    stored = cast(dict[str, str], await client.hgetall(keys("migrations")))
    rows = []
    for version, value in stored.items():
        name, checksum, _ = value.split("|")
        rows.append(LedgerRow(int(version), name, checksum))
    place = LedgerPlace(
        where=f'redis prefix "{keys.prefix}"',
        table=f"the hash {keys('migrations')}",
        fresh="use a fresh key prefix (--schema)",
    )
    return judge(sorted(rows, key=lambda row: row.version), known_migrations(), place)


async def apply_migrations(client: Redis, keys: Keyspace, clock: Clock) -> list[Migration]:
    """Apply every migration the store lacks; answers those this call applied."""
    state = await read_ledger(client, keys)
    if state.problem is not None:
        raise state.problem
    applied = []
    for migration in state.pending:
        library = resources.files("ferry.drivers._redis.lua").joinpath("lib.lua")
        script = library.read_text(encoding="utf-8") + _APPLY.replace("{migration}", migration.sql)
        arguments: list[str | int] = [
            migration.version,
            migration.name,
            migration.checksum,
            clock.now_ms(),
        ]
        if await client.eval(script, 1, keys.tag, *arguments):
            applied.append(migration)
    return applied
