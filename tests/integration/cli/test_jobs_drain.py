"""``ferry jobs drain`` as a real process between two real stores: what moves, what stays,
what it refuses before touching anything, and how a rerun finishes an interrupted drain."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from support.processes import REPO
from support.waiting import eventually

from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver, postgres_job_driver
from ferry.drivers.protocol import ClaimOptions, EnqueueRequest, NackOptions, RunFilter

from .conftest import Ferry, cli_env, golden

UNREACHABLE = "postgresql://nobody:secret@127.0.0.1:1/none"


@pytest.fixture
async def target(
    postgres_dsn: str, new_pg_schema: Callable[[], str]
) -> AsyncIterator[PostgresJobDriver]:
    """An empty store in a schema of its own on the test server: where the drain moves to."""
    driver = postgres_job_driver(postgres_dsn, schema=new_pg_schema())
    yield driver
    await driver.close()


@pytest.fixture
async def new_database(postgres_dsn: str) -> AsyncIterator[str]:
    """The DSN of a freshly created, empty database on the test server: a new PostgreSQL."""
    name = f"ferry_new_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(postgres_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield urlunsplit(urlsplit(postgres_dsn)._replace(path=f"/{name}"))
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def drain_into(target: PostgresJobDriver, dsn: str, *args: str) -> list[str]:
    """The command line of a drain from the test's schema into ``target``."""
    return ["jobs", "drain", "--to", dsn, "--to-schema", target.schema, *args]


def total(envelope: dict[str, Any], *names: str) -> tuple[int, ...]:
    return tuple(envelope["data"]["total"][name] for name in names)


async def states(dsn: str, schema: str) -> dict[str, str]:
    """Every run in ``schema`` of ``dsn`` as idempotency key -> state, read in SQL."""
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(f'SELECT idempotency_key, state FROM "{schema}".jobs')
    finally:
        await connection.close()
    return {row["idempotency_key"]: row["state"] for row in rows}


async def test_a_drain_moves_queued_and_dead_runs_to_a_new_database_faithfully(
    ferry: Ferry, seeded: PostgresJobDriver, new_database: str, postgres_dsn: str
) -> None:
    [dead] = await seeded.introspect.list_runs(RunFilter(state="dead"))
    before = await seeded.introspect.get_run(dead.id)
    result = ferry(
        "jobs", "drain", "--to", new_database, "--include-dead", "--batch", "1", "--json"
    )
    assert result.code == 0, result.stdout + result.stderr
    envelope = result.envelope
    golden("jobs_drain", envelope)
    assert total(envelope, "reserved", "imported", "present", "removed") == (2, 2, 0, 2)
    assert [b["removed"] for b in envelope["data"]["batches"]] == [1, 1], "--batch 1"
    assert envelope["data"]["leftOnSource"] == dict.fromkeys(
        ["queued", "dead", "moving", "running", "sleeping"], 0
    )
    assert envelope["data"]["to"] == (
        postgres_job_driver(new_database, schema=seeded.schema).location
    )
    assert await states(postgres_dsn, seeded.schema) == {"greet:ada": "completed"}
    moved = postgres_job_driver(new_database, schema=seeded.schema)
    try:
        assert await states(new_database, seeded.schema) == {
            "greet:bob": "dead",
            "greet:cyd": "queued",
        }
        [copy_summary] = await moved.introspect.list_runs(RunFilter(state="dead"))
        copy = await moved.introspect.get_run(copy_summary.id)
        assert copy is not None and before is not None
        assert (copy.summary.attempts, copy.summary.last_error, copy.summary.created_at_ms) == (
            before.summary.attempts,
            before.summary.last_error,
            before.summary.created_at_ms,
        )
        assert [(s.name, s.result) for s in copy.steps] == [
            (s.name, s.result) for s in before.steps
        ]
    finally:
        await moved.close()


async def test_running_and_sleeping_runs_stay_and_dead_ones_move_only_with_the_flag(
    ferry: Ferry, seeded: PostgresJobDriver, target: PostgresJobDriver, postgres_dsn: str
) -> None:
    from cli_app import greet

    previous = set_job_driver(seeded)
    try:
        await greet.enqueue({"name": "dan"})
        await greet.enqueue({"name": "eve"})
    finally:
        set_job_driver(previous)
    running, sleeping = await seeded.claim(ClaimOptions("w", 600_000, limit=2))
    far = seeded.clock.now_ms() + 86_400_000
    await seeded.nack(sleeping.id, NackOptions("w", "sleep", run_at_ms=far))
    result = ferry(*drain_into(target, postgres_dsn))
    assert result.code == 0, result.stdout + result.stderr
    assert "left on the source: 0 queued, 1 dead, 0 moving, 1 running, 1 sleeping" in result.stdout
    assert await states(postgres_dsn, seeded.schema) == {
        "greet:ada": "completed",
        "greet:bob": "dead",
        running.idempotency_key: "running",
        sleeping.idempotency_key: "sleeping",
    }
    assert await states(postgres_dsn, target.schema) == {"greet:eve": "queued"}


async def test_a_drain_moves_only_the_named_queues(
    ferry: Ferry, seeded: PostgresJobDriver, target: PostgresJobDriver, postgres_dsn: str
) -> None:
    result = ferry(*drain_into(target, postgres_dsn, "--queue", "default", "--json"))
    assert result.code == 0 and total(result.envelope, "removed") == (0,)
    assert "greet:cyd" in await states(postgres_dsn, seeded.schema)
    result = ferry(*drain_into(target, postgres_dsn, "--queue", "later", "--json"))
    assert total(result.envelope, "removed") == (1,)
    assert await states(postgres_dsn, target.schema) == {"greet:cyd": "queued"}


async def test_a_rerun_finishes_what_an_interrupted_drain_left_reserved_or_copied(
    ferry: Ferry, seeded: PostgresJobDriver, target: PostgresJobDriver, postgres_dsn: str
) -> None:
    """The two places a drain can die with work outstanding: after the reservation (the
    run is only on the source, ``moving``) and after the copy committed (on both). The
    rerun needs no --include-dead: it finishes every run reserved for its target."""
    reserved = await seeded.transfer.reserve(
        "drain:crashed", target=target.location, limit=10, include_dead=True
    )
    listed = ferry("jobs", "ls", "--state", "moving", "--json").envelope["data"]["runs"]
    assert sorted(run["id"] for run in listed) == sorted(run.id for run in reserved)
    stats = ferry("jobs", "stats", "--json").envelope["data"]["queues"]
    assert {q["queue"]: q["counts"]["moving"] for q in stats} == {"default": 1, "later": 1}
    assert await seeded.claim(ClaimOptions("w", 1_000)) == [], "no worker takes them meanwhile"
    [dead] = [run for run in reserved if run.state == "dead"]
    await target.transfer.import_runs([dead])  # committed there; the remove never ran

    result = ferry(*drain_into(target, postgres_dsn, "--json"))
    assert result.code == 0, result.stdout + result.stderr
    assert total(result.envelope, "reserved", "imported", "present", "removed") == (2, 1, 1, 2)
    assert await states(postgres_dsn, seeded.schema) == {"greet:ada": "completed"}
    assert await states(postgres_dsn, target.schema) == {"greet:cyd": "queued", "greet:bob": "dead"}


async def test_a_key_the_target_gives_to_a_different_run_is_reported_and_not_moved(
    ferry: Ferry, seeded: PostgresJobDriver, target: PostgresJobDriver, postgres_dsn: str
) -> None:
    from cli_app import greet

    previous = set_job_driver(target)
    try:
        theirs = await greet.enqueue({"name": "cyd"})  # the app already enqueued it there
    finally:
        set_job_driver(previous)
    result = ferry(*drain_into(target, postgres_dsn, "--include-dead", "--json"))
    assert result.code == 1
    envelope = result.envelope
    [finding] = envelope["findings"]
    assert finding["code"] == "X_DRAIN_KEY_COLLISION" and "greet:cyd" in finding["message"]
    [collision] = envelope["data"]["collisions"]
    assert (collision["idempotencyKey"], collision["targetId"]) == ("greet:cyd", theirs.job_id)
    assert total(envelope, "removed", "collisions") == (1, 1)
    assert envelope["data"]["released"] == 1
    assert await states(postgres_dsn, seeded.schema) == {
        "greet:ada": "completed",
        "greet:cyd": "queued",
    }
    assert await states(postgres_dsn, target.schema) == {"greet:cyd": "queued", "greet:bob": "dead"}
    human = ferry(*drain_into(target, postgres_dsn))
    assert human.code == 1
    # The report is the result (stdout); the refusal goes to stderr.
    assert human.stdout.startswith("moved 0 run(s) from ")
    assert "\nX_DRAIN_KEY_COLLISION: 1 run(s) were not moved (0 others" in human.stderr


@pytest.mark.parametrize(
    ("source", "to", "code", "words"),
    [
        (UNREACHABLE, "memory://", "X_DRAIN_NOT_DURABLE", "lost when this command exits"),
        ("memory://", UNREACHABLE, "X_DRAIN_NOT_DURABLE", "nothing there to move"),
        (UNREACHABLE, UNREACHABLE.replace("secret", "other"), "X_DRAIN_SAME_STORE", "only copy"),
        (UNREACHABLE, "mysql://u:secret@h/db", "X_DB_URL_INVALID", '"mysql://"'),
    ],
)
def test_a_drain_refuses_before_touching_any_database(
    ferry: Ferry, postgres_dsn: str, source: str, to: str, code: str, words: str
) -> None:
    result = ferry("jobs", "drain", "--from", source, "--to", to, "--json")
    assert result.code == 1
    [finding] = result.envelope["findings"]
    assert finding["code"] == code and words in finding["message"]
    assert "secret" not in result.stdout
    golden("refused", result.envelope)


async def test_an_unreachable_target_is_refused_before_anything_is_reserved(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    result = ferry("jobs", "drain", "--to", UNREACHABLE, "--json")
    assert result.code == 1
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_DB_UNREACHABLE" and "127.0.0.1:1" in finding["message"]
    assert "secret" not in result.stdout
    assert await seeded.introspect.list_runs(RunFilter(state="moving")) == []


def test_a_drain_needs_a_source_and_a_whole_batch(ferry: Ferry, postgres_dsn: str) -> None:
    env = {**cli_env(postgres_dsn, "ferry"), "DATABASE_URL": ""}
    unset = ferry("jobs", "drain", "--to", postgres_dsn, "--json", env=env)
    assert unset.envelope["findings"][0]["code"] == "X_DRIVER_UNSET"
    assert "--from" in unset.envelope["findings"][0]["fix"]
    batch = ferry("jobs", "drain", "--to", "memory://", "--batch", "0", "--json")
    assert batch.envelope["findings"][0]["code"] == "X_OUT_OF_RANGE"
    assert "--batch" in batch.envelope["findings"][0]["message"]


def alias_of(dsn: str) -> str | None:
    """Another spelling of ``dsn`` that reaches the same server but reads as another store:
    a socket directory with a trailing slash, or localhost by its address."""
    parts = urlsplit(dsn)
    if "host=/" in parts.query:
        return urlunsplit(parts._replace(query=parts.query.replace("host=/", "host=//", 1)))
    if parts.hostname == "localhost":
        return dsn.replace("localhost", "127.0.0.1", 1)
    return None


async def test_a_drain_into_its_own_store_under_another_name_moves_nothing_and_loses_nothing(
    ferry: Ferry, seeded: PostgresJobDriver, postgres_dsn: str
) -> None:
    alias = alias_of(postgres_dsn)
    if alias is None:
        pytest.skip("no second spelling of this DATABASE_URL to test with")
    before = await states(postgres_dsn, seeded.schema)
    result = ferry("jobs", "drain", "--to", alias, "--include-dead", "--json")
    assert result.code == 1, result.stdout + result.stderr
    envelope = result.envelope
    assert envelope["data"]["from"] != envelope["data"]["to"], "the URL check cannot tell"
    [finding] = envelope["findings"]
    assert finding["code"] == "X_DRAIN_KEY_COLLISION" and "another name" in finding["message"]
    assert (envelope["data"]["stopped"], *total(envelope, "removed")) == ("collisions", 0)
    assert await states(postgres_dsn, seeded.schema) == before


async def test_a_target_lost_mid_drain_stops_it_with_what_moved_and_a_rerun_finishes(
    ferry: Ferry,
    seeded: PostgresJobDriver,
    target: PostgresJobDriver,
    postgres_dsn: str,
    tmp_path: Path,
) -> None:
    """The target's session is terminated (a failover, a restart) in the middle of an
    import: held there by a table lock, so the failure lands inside a statement."""
    await seeded.enqueue_many(
        [
            EnqueueRequest("cli.greet", "bulk", {"name": f"n{n}"}, f"bulk:{n}", 2)
            for n in range(3_000)
        ]
    )
    await target.open()
    separator = "&" if "?" in postgres_dsn else "?"
    tagged = f"{postgres_dsn}{separator}application_name=drain-target-under-test"
    out_path, err_path = tmp_path / "drain.out", tmp_path / "drain.err"
    with out_path.open("w") as out, err_path.open("w") as err:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ferry",
            *drain_into(target, tagged, "--batch", "10", "--json"),
            env=cli_env(postgres_dsn, seeded.schema),
            cwd=REPO,
            stdout=out,
            stderr=err,
        )
        admin = await asyncpg.connect(postgres_dsn)
        try:
            jobs = f'"{target.schema}".jobs'

            async def moved_some() -> bool:
                assert process.returncode is None, err_path.read_text()
                return bool(await admin.fetchval(f"SELECT count(*) > 0 FROM {jobs}"))

            await eventually(moved_some, within_s=60, what="the first batch on the target")
            async with admin.transaction():
                await admin.execute(f"LOCK TABLE {jobs} IN ACCESS EXCLUSIVE MODE")
                waiting = (
                    "SELECT pid FROM pg_stat_activity WHERE application_name = $1 "
                    "AND wait_event_type = 'Lock'"
                )

                async def import_waits() -> bool:
                    return bool(await admin.fetch(waiting, "drain-target-under-test"))

                await eventually(import_waits, within_s=60, what="the next import to wait")
                await admin.execute(
                    f"SELECT pg_terminate_backend(pid) FROM ({waiting}) AS w",
                    "drain-target-under-test",
                )
        finally:
            await admin.close()
        assert await asyncio.wait_for(process.wait(), 120) == 1, err_path.read_text()
    envelope = json.loads(out_path.read_text())
    [finding] = envelope["findings"]
    assert finding["code"] == "X_DB_UNREACHABLE" and "the drain stopped after" in finding["message"]
    assert "run the drain again" in finding["fix"]
    moved = envelope["data"]["total"]["removed"]
    assert 0 < moved < 3_001
    assert envelope["data"]["leftOnSource"] is None
    stuck = await seeded.introspect.list_runs(RunFilter(state="moving"))
    assert len(stuck) == 10, "the batch in flight stays reserved for the rerun"

    rerun = ferry(*drain_into(target, postgres_dsn, "--json"))
    assert rerun.code == 0, rerun.stdout + rerun.stderr
    assert moved + total(rerun.envelope, "removed")[0] == 3_001
    assert sum(sum(q.counts.values()) for q in await target.stats()) == 3_001
    assert await states(postgres_dsn, seeded.schema) == {
        "greet:ada": "completed",
        "greet:bob": "dead",
    }
