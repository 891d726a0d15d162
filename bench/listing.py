"""(h) Listing and search at a million runs: one page of ``ferry jobs ls`` (the dashboard's
run list, MCP's ``admin.x_jobs.list``) per filter, on PostgreSQL.

A fresh database gets ferry's schema and 1,000,000 runs written by one ``INSERT … SELECT
generate_series`` (then ``VACUUM ANALYZE``, as autovacuum would): 90 % completed, 5 % dead
and 1 % cancelled with a last error, 2 % queued after a failed attempt (retrying), 1 %
scheduled for later and 1 % queued now; each with a unique key ``order:<n>`` and an input
``{"org_id": "<n mod 1000>", "n": n}``. Each filter then pages through
``ferry._operations.list_runs`` — the code every surface runs — 5 untimed pages, then
``samples`` timed ones; the time is the whole call (parsing the words, the statement, the
rows back). The last two filters match one run near the bottom of the 100,000 ids a search
page reads: the whole window is read, a search's worst page. Run it with
``python -m bench.listing`` (``DATABASE_URL`` or an embedded server, as the rest of the
bench).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Mapping

import asyncpg

import ferry._operations as operations
from bench.server import describe, fresh_database, local_server
from bench.stats import Percentiles, percentiles
from ferry.drivers import PostgresJobDriver, postgres_job_driver

_ROWS = """
INSERT INTO ferry.jobs (
    name, queue, payload, idempotency_key, state, attempts, max_attempts, run_at_ms,
    result, created_at_ms, updated_at_ms, finished_at_ms, last_error_code,
    last_error_message
)
SELECT 'bench.order', CASE WHEN g % 10 = 0 THEN 'priority' ELSE 'default' END,
       jsonb_build_object('org_id', (g % 1000)::text, 'n', g), 'order:' || g,
       kind.state, kind.attempts, 3,
       CASE WHEN kind.later THEN $1::bigint + 3600000 ELSE $1::bigint - $2::bigint + g END,
       CASE WHEN kind.state = 'completed' THEN 'null'::jsonb END,
       $1::bigint - $2::bigint + g, $1::bigint - $2::bigint + g,
       CASE WHEN kind.state IN ('completed', 'dead', 'cancelled')
            THEN $1::bigint - $2::bigint + g END,
       kind.code,
       CASE WHEN kind.code IS NOT NULL THEN 'upstream answered 503 for order ' || g END
FROM generate_series(1, $2::bigint) AS g,
LATERAL (
    SELECT * FROM (VALUES
        (g % 100 < 90, 'completed', 1, false, NULL),
        (g % 100 BETWEEN 90 AND 94, 'dead', 3, false,
         CASE WHEN g % 2 = 0 THEN 'X_TIMEOUT' ELSE 'X_JOB_FAILED' END),
        (g % 100 = 95, 'cancelled', 1, false, 'X_CANCELLED'),
        (g % 100 IN (96, 97), 'queued', 1, true, 'X_JOB_FAILED'),
        (g % 100 = 98, 'queued', 0, true, NULL),
        (g % 100 = 99, 'queued', 0, false, NULL)
    ) AS k(pick, state, attempts, later, code)
    WHERE k.pick
) AS kind
"""
"""A million runs as a busy service keeps them (columns of migration 0001 and the last
error of 0001; ids from the identity column, oldest first)."""

FILTERS: Mapping[str, Mapping[str, str]] = {
    "newest page": {},
    "page 10,000 runs back": {"before": "990000"},
    "queue and job": {"queue": "priority", "job": "bench.order"},
    "state dead": {"state": "dead"},
    "view retrying": {"view": "retrying"},
    "view scheduled": {"view": "scheduled"},
    "key prefix": {"key": "order:4242"},
    "error code": {"error_code": "X_TIMEOUT"},
    "error text (search)": {"error_text": "503 for order 99"},
    "input contains (search)": {"input": '{"org_id": "42"}'},
    "error text, one run in the window": {"error_text": "503 for order 900091"},
    "input, one run in the window": {"input": '{"n": 900091}'},
}
"""Each filter as the operator types its words (``ferry jobs ls --<word>``)."""


async def listing(dsn: str, *, rows: int, samples: int) -> tuple[float, dict[str, Percentiles]]:
    """On a fresh database: write ``rows`` runs, then time a page of every filter."""
    async with fresh_database(dsn, "ferry_listing") as database:
        driver = postgres_job_driver(database)
        await driver.open()
        try:
            started = time.perf_counter()
            connection = await asyncpg.connect(database)
            try:
                await connection.execute(_ROWS, driver.clock.now_ms(), rows)
                await connection.execute("VACUUM ANALYZE ferry.jobs")
            finally:
                await connection.close()
            written = time.perf_counter() - started
            pages = {name: await _pages(driver, words, samples) for name, words in FILTERS.items()}
        finally:
            await driver.close()
    return written, pages


async def _pages(driver: PostgresJobDriver, words: Mapping[str, str], samples: int) -> Percentiles:
    """``samples`` timed pages of one filter, after 5 untimed ones."""
    timed: list[float] = []
    for n in range(5 + samples):
        started = time.perf_counter()
        page = await operations.list_runs(driver, dict(words))
        elapsed = (time.perf_counter() - started) * 1000
        if n >= 5:
            timed.append(elapsed)
        assert page.runs, f"{words}: an empty page measures nothing"
    return percentiles(timed)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.listing", description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000, help="runs in the table")
    parser.add_argument("--samples", type=int, default=50, help="timed pages per filter")
    args = parser.parse_args()
    with local_server() as dsn:
        server = asyncio.run(describe(dsn))
        written, pages = asyncio.run(listing(dsn, rows=args.rows, samples=args.samples))
    print(f"{server.version} ({server.where}); {args.rows:,} runs written in {written:.1f} s")
    print(f"| filter ({args.samples} pages each) | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, p in pages.items():
        print(f"| {name} | {p.p50:.1f} | {p.p95:.1f} |")


if __name__ == "__main__":
    main()
