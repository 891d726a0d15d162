"""(f) The physical reference: a bare asyncpg claim+settle loop, no queue library at all.

A table with only what a lease queue needs, a partial index in claim order, and a loop
that claims 100 rows (``FOR UPDATE SKIP LOCKED``, one statement) and settles them (one
statement) until the table is drained: two round trips and two commits per 100 jobs, no
job bodies, no payload decoding. What a Python process on this machine can move through
this server at best — the ceiling any of the systems could reach with batches of 100.
"""

from __future__ import annotations

import time

import asyncpg

from bench.server import fresh_database
from bench.stats import Rate, drain_rate

_SCHEMA = """
CREATE TABLE ref_jobs (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    payload   jsonb   NOT NULL,
    state     text    NOT NULL DEFAULT 'queued',
    run_at_ms bigint  NOT NULL,
    locked_by text,
    lease_ms  bigint
);
CREATE INDEX ref_jobs_claim ON ref_jobs (run_at_ms, id) WHERE state = 'queued';
"""
_FILL = """
INSERT INTO ref_jobs (payload, run_at_ms)
SELECT jsonb_build_object('n', g, 't0', 0), 0 FROM generate_series(1, $1::bigint) AS g
"""
_CLAIM = """
UPDATE ref_jobs SET state = 'running', locked_by = $1, lease_ms = $2
WHERE id IN (SELECT id FROM ref_jobs WHERE state = 'queued' AND run_at_ms <= $2
             ORDER BY run_at_ms, id LIMIT $3 FOR UPDATE SKIP LOCKED)
RETURNING id, payload::text
"""
_SETTLE = """
UPDATE ref_jobs SET state = 'done', locked_by = NULL
WHERE id = ANY ($1::bigint[]) AND locked_by = $2
"""


async def raw_claim_settle(server_dsn: str, *, count: int, batch: int) -> Rate:
    """Fill ``count`` rows, then claim and settle them ``batch`` at a time on one connection."""
    async with fresh_database(server_dsn, "reference") as dsn:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(_SCHEMA)
            await connection.execute(_FILL, count)
            await connection.execute("ANALYZE ref_jobs")
            done = 0
            started, cpu = time.perf_counter(), time.process_time()
            while True:
                now_ms = time.time_ns() // 1_000_000
                rows = await connection.fetch(_CLAIM, "ref", now_ms, batch)
                if not rows:
                    break
                await connection.execute(_SETTLE, [row["id"] for row in rows], "ref")
                done += len(rows)
            return drain_rate(
                done, time.perf_counter() - started, time.process_time() - cpu, done == count
            )
        finally:
            await connection.close()
