"""``ferry doctor``: is this ferry healthy? The database, migrations, leader, leases, clock.

Each check is one line of the report and, when it fails, one finding with its ``X_*``
code. The doctor changes nothing: it judges the migration ledger the way every process
does at start (``X_SCHEMA_NEWER``, ``X_SCHEMA_DRIFT``, ``X_MIGRATIONS_PENDING``) before any
driver would apply migrations, and runs the remaining checks only on an up-to-date schema.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from ferry._cli.database import add_database_options, driver_for, open_driver
from ferry._cli.numbers import whole
from ferry._cli.tables import rendering, state_style, table
from ferry._clock import SystemClock
from ferry._operations.envelope import Outcome
from ferry._operations.filters import instant
from ferry._scheduler.store import SchedulerStore
from ferry.drivers.capabilities import INTROSPECT, capabilities_of, need
from ferry.drivers.protocol import JobDriver, RunFilter
from ferry.errors import FerryError

STUCK_SHOWN = 20
"""How many stuck run ids the report names (the count is always exact up to 500)."""


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str


def register(subparsers: Any) -> None:
    """Add ``ferry doctor``."""
    doctor = subparsers.add_parser(
        "doctor", help="check the database, migrations, leader, stuck leases and clock skew"
    )
    add_database_options(doctor)
    doctor.add_argument(
        "--max-skew-ms",
        type=whole("--max-skew-ms", 0, 86_400_000),
        default="1000",
        help="largest clock difference with the database that passes (default 1000)",
    )
    doctor.set_defaults(handler=run_doctor, command_path=["doctor"])


async def run_doctor(args: argparse.Namespace) -> Outcome:
    """Run every check; a failed one is a finding and makes the exit non-zero."""
    checks: list[Check] = []
    findings: list[dict[str, str]] = []

    def failed(name: str, error: FerryError) -> None:
        checks.append(Check(name, False, error.message))
        findings.append(error.to_dict())

    if await _schema_checks(args, checks, failed):
        await _runtime_checks(args, checks, failed)
    ok = not findings
    text = rendering(
        table(
            None,
            ["check", "", "detail"],
            [(c.name, "ok" if c.ok else "FAIL", c.detail) for c in checks],
            styles={"": state_style},
        )
    )
    return Outcome(
        "doctor",
        "all checks passed" if ok else f"{len(findings)} check(s) failed",
        {"checks": [asdict(c) for c in checks], "capabilities": capabilities_of(driver_for(args))},
        findings,
        ok=ok,
        text=text,
    )


async def _schema_checks(args: argparse.Namespace, checks: list[Check], failed: Any) -> bool:
    """Reachability and the migration ledger, read without applying (or creating) anything;
    answers whether the database is ready to use."""
    driver = driver_for(args)
    try:
        database, ledger = await driver.inspect()
    except FerryError as unreachable:
        failed("database", unreachable)
        return False
    finally:
        await driver.close()
    checks.append(Check("database", True, database))
    offers = capabilities_of(driver)
    checks.append(Check("capabilities", True, ", ".join(offers) or "the core only"))
    if ledger.problem is not None:
        failed("migrations", ledger.problem)
    elif ledger.pending:
        failed(
            "migrations",
            FerryError(
                "X_MIGRATIONS_PENDING",
                f"{driver.where} lacks migration(s) {', '.join(m.label for m in ledger.pending)}",
                "run `ferry migrate` (every ferry process also applies them at start)",
            ),
        )
    else:
        checks.append(Check("migrations", True, f"{driver.where} is up to date"))
    return ledger.problem is None and not ledger.pending


async def _runtime_checks(args: argparse.Namespace, checks: list[Check], failed: Any) -> None:
    """Leader, stuck leases and clock skew, read through the driver and the scheduler store."""
    driver = await open_driver(args)
    try:
        if set(capabilities_of(driver)) >= {"leases", "records", "introspect"}:
            await _fleet_checks(driver, checks, failed)
        else:
            checks.append(
                Check("scheduler leader", True, "not checked: the driver offers no leases")
            )
        skew = await _clock_skew_ms(driver.database_now_ms)
        if skew is None:
            checks.append(Check("clock skew", True, "none possible: the database reads ours"))
        elif abs(skew) > args.max_skew_ms:
            failed(
                "clock skew",
                FerryError(
                    "X_CLOCK_SKEW",
                    f"this machine's clock is {skew:+d} ms off the database's "
                    f"(allowed: {args.max_skew_ms} ms)",
                    "run NTP (chrony) on every node; leases are measured on worker clocks",
                ),
            )
        else:
            checks.append(Check("clock skew", True, f"{skew:+d} ms against the database"))
    finally:
        await driver.close()


async def _fleet_checks(driver: JobDriver, checks: list[Check], failed: Any) -> None:
    """The scheduler's leader and stuck leases, on a driver offering what they read."""
    store = SchedulerStore(driver, by="ferry doctor")
    now = driver.clock.now_ms()
    leader = await store.leader(now_ms=now)
    if leader is not None:
        checks.append(
            Check(
                "scheduler leader",
                True,
                f"{leader.holder} until {instant(leader.expires_at_ms)}",
            )
        )
    elif await store.ticks():
        failed(
            "scheduler leader",
            FerryError(
                "X_NO_SCHEDULER_LEADER",
                "tasks have been dispatched on this schema, but no scheduler holds the "
                "leader lease now, so no task fires",
                "check the scheduler Deployment (ROLE=scheduler) runs and reaches the database",
            ),
        )
    else:
        checks.append(Check("scheduler leader", True, "no tasks dispatched here yet; none needed"))

    introspect = need(driver, INTROSPECT, by="ferry doctor")
    stuck = await introspect.list_runs(RunFilter(lease_expired=True, limit=500))
    if stuck:
        ids = ", ".join(r.id for r in stuck[:STUCK_SHOWN])
        failed(
            "stuck leases",
            FerryError(
                "X_STUCK_LEASES",
                f"{len(stuck)} running run(s) hold a lapsed lease no worker took over: {ids}",
                "check workers for those queues are running and the queues are not paused "
                "(`ferry jobs stats`)",
            ),
        )
    else:
        checks.append(Check("stuck leases", True, "no running run holds a lapsed lease"))


async def _clock_skew_ms(database_now_ms: Callable[[], Awaitable[int | None]]) -> int | None:
    """Database time minus ours, at the midpoint of the round trip (so latency cancels);
    None for a database with no clock of its own (SQLite: every process reads the host's)."""
    clock = SystemClock()
    before = clock.now_ms()
    server = await database_now_ms()
    after = clock.now_ms()
    return None if server is None else server - (before + after) // 2
