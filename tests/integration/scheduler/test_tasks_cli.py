"""``ferry tasks list/show/pause/resume`` as a user runs them: real processes, real rows."""

from __future__ import annotations

import time
from typing import Any

from support.processes import SCHEDULER_APP, ferry_env, run_ferry

from ferry._scheduler import SCHEDULER_LEASE, SchedulerStore, TaskTick
from ferry.drivers import PostgresJobDriver

LIST_FIELDS = {
    "kind",
    "name",
    "cron",
    "tz",
    "catchUp",
    "maxCatchUp",
    "jobs",
    "nextMs",
    "next",
    "last",
    "lastMs",
    "lastFiredAtMs",
    "lastFiredAt",
    "paused",
}


def ferry(dsn: str, schema: str, *words: str) -> tuple[int, str]:
    """Run ``ferry <words> --app <the test app>``; answers (exit code, stdout and stderr)."""
    done = run_ferry(*words, "--app", SCHEDULER_APP, env=ferry_env(dsn, schema))
    return done.code, done.stdout + done.stderr


def envelope(dsn: str, schema: str, *words: str) -> dict[str, Any]:
    done = run_ferry(*words, "--json", "--app", SCHEDULER_APP, env=ferry_env(dsn, schema))
    document = done.envelope
    assert (done.code == 0) == document["ok"], done.stdout + done.stderr
    return document


async def test_tasks_list_reports_the_spec_fields_with_null_last_before_the_first_fire(
    postgres_dsn: str, pg_schema: str, driver: PostgresJobDriver
) -> None:
    document = envelope(postgres_dsn, pg_schema, "tasks", "list")
    assert set(document) == {"ok", "command", "summary", "findings", "data"}
    assert (document["ok"], document["summary"], document["findings"]) == (True, "1 task(s)", [])
    (row,) = document["data"]
    assert set(row) == LIST_FIELDS
    assert (row["name"], row["cron"], row["tz"], row["jobs"]) == (
        "every_minute",
        "* * * * *",
        "UTC",
        ["record_minute"],
    )
    assert (row["last"], row["lastMs"], row["lastFiredAtMs"], row["paused"]) == (
        None,
        None,
        None,
        False,
    )
    assert row["nextMs"] % 60_000 == 0 and row["next"].endswith(":00Z")


async def test_tasks_show_reads_the_last_fire_from_the_tick_row_and_adds_describe(
    postgres_dsn: str, pg_schema: str, driver: PostgresJobDriver
) -> None:
    occurrence = int(time.time()) // 60 * 60_000
    store = SchedulerStore(driver)
    lease = await store.leases.acquire(SCHEDULER_LEASE, "seed", now_ms=occurrence, ttl_ms=600_000)
    assert lease is not None
    tick = TaskTick("every_minute", occurrence, occurrence, occurrence + 250)
    assert await store.record_tick(tick, lease=lease, now_ms=occurrence)
    document = envelope(postgres_dsn, pg_schema, "tasks", "show", "every_minute", "--count", "3")
    row = document["data"]
    assert set(row) == LIST_FIELDS | {"describe", "nextOccurrences"}
    assert (row["lastMs"], row["lastFiredAtMs"]) == (occurrence, occurrence + 250)
    assert row["last"].endswith("Z")
    assert row["describe"] == "every minute"
    assert [o["ms"] - row["nextMs"] for o in row["nextOccurrences"]] == [0, 60_000, 120_000]


async def test_pause_and_resume_show_in_the_listing(
    postgres_dsn: str, pg_schema: str, driver: PostgresJobDriver
) -> None:
    paused = envelope(postgres_dsn, pg_schema, "tasks", "pause", "every_minute")
    assert paused["data"] == {"name": "every_minute", "paused": True}
    listed = envelope(postgres_dsn, pg_schema, "tasks", "list")
    assert listed["data"][0]["paused"] is True
    envelope(postgres_dsn, pg_schema, "tasks", "resume", "every_minute")
    code, table = ferry(postgres_dsn, pg_schema, "tasks", "list")
    assert code == 0
    header, line = (_cells(row) for row in table.splitlines()[1:4:2])
    assert header == ["name", "cron", "tz", "next", "last", "paused"]
    assert line[0] == "every_minute" and line[-1] == "no"


def _cells(row: str) -> list[str]:
    """The cells of one line of a table (``│ a │ b │``)."""
    return [cell.strip() for cell in row.replace("┃", "│").strip("│").split("│")]


async def test_an_unknown_task_name_is_refused_with_x_task_unknown(
    postgres_dsn: str, pg_schema: str, driver: PostgresJobDriver
) -> None:
    document = envelope(postgres_dsn, pg_schema, "tasks", "show", "nightly")
    assert document["ok"] is False
    (finding,) = document["findings"]
    assert finding["code"] == "X_TASK_UNKNOWN"
    assert '"nightly"' in finding["message"] and "every_minute" in finding["message"]
    assert "ferry tasks list" in finding["fix"]


async def test_tasks_run_fires_the_entries_now_as_the_dashboards_run_now_does(
    postgres_dsn: str, pg_schema: str, driver: PostgresJobDriver
) -> None:
    first = envelope(postgres_dsn, pg_schema, "tasks", "run", "every_minute")
    assert first["ok"] and first["summary"].startswith("task every_minute fired 1 entry")
    [fired] = first["data"]["runs"]
    assert (fired["job"], fired["deduplicated"]) == ("record_minute", False)
    assert driver.introspect is not None
    run = await driver.introspect.get_run(fired["jobId"])
    assert run is not None and run.summary.name == "record_minute"
    unknown = envelope(postgres_dsn, pg_schema, "tasks", "run", "nope")
    assert unknown["findings"][0]["code"] == "X_TASK_UNKNOWN"


async def test_jobs_enqueue_queues_one_run_with_its_own_priority_delay_and_queue(
    postgres_dsn: str, pg_schema: str, driver: PostgresJobDriver
) -> None:
    words = ("jobs", "enqueue", "record_minute", "--input", '{"occurrence_ms": 60000}')
    done = envelope(
        postgres_dsn, pg_schema, *words, "--priority", "7", "--delay", "1h", "--queue", "late"
    )
    assert done["ok"] and done["data"]["deduplicated"] is False
    assert driver.introspect is not None
    run = await driver.introspect.get_run(done["data"]["jobId"])
    assert run is not None
    assert (run.summary.queue, run.summary.state, run.idempotency_key) == (
        "late",
        "queued",
        "minute:60000",
    )
    # The due time is read off the process's clock before the driver stamps the creation,
    # so the two may be a few milliseconds apart; the delay is the hour either way.
    assert 3_599_000 <= run.summary.run_at_ms - run.summary.created_at_ms <= 3_600_000
    again = envelope(postgres_dsn, pg_schema, *words)
    assert again["data"] == {**done["data"], "deduplicated": True}
    for bad, code in (
        (("--priority", "2147483648"), "X_OUT_OF_RANGE"),
        (("--priority", "high"), "X_OUT_OF_RANGE"),
        (("--input", "{not json"), "X_VALIDATION"),
        (("--input", '{"occurrence_ms": "soon"}'), "X_VALIDATION"),
    ):
        refused = envelope(
            postgres_dsn,
            pg_schema,
            "jobs",
            "enqueue",
            "record_minute",
            *(words[3:] if bad[0] != "--input" else ()),
            *bad,
        )
        assert refused["findings"][0]["code"] == code, refused
    unknown = envelope(postgres_dsn, pg_schema, "jobs", "enqueue", "nope", "--input", "{}")
    assert unknown["findings"][0]["code"] == "X_JOB_UNKNOWN"
