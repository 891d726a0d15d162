"""``ferry jobs …`` and ``ferry queues …`` as real processes: envelopes, codes, tables."""

from __future__ import annotations

from types import ModuleType

import pytest

from ferry._jobs.facade import set_job_driver
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import ClaimOptions

from .conftest import Ferry, golden


async def test_jobs_ls_lists_runs_newest_first_in_the_envelope(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    result = ferry("jobs", "ls", "--json")
    assert result.code == 0, result.stderr
    envelope = result.envelope
    assert (envelope["ok"], envelope["command"], envelope["findings"]) == (True, "jobs ls", [])
    runs = envelope["data"]["runs"]
    assert [r["state"] for r in runs] == ["queued", "dead", "completed"]
    assert runs[1]["lastError"]["code"] == "X_JOB_FAILED"
    assert envelope["data"]["nextBeforeId"] is None
    golden("jobs_ls", envelope)


async def test_jobs_ls_filters_by_state_queue_time_and_pages_by_id(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    def ids(*args: str) -> list[str]:
        result = ferry("jobs", "ls", "--json", *args)
        assert result.code == 0, result.stdout + result.stderr
        return [r["id"] for r in result.envelope["data"]["runs"]]

    everything = ids()
    assert ids("--state", "dead") == [everything[1]]
    assert ids("--queue", "later") == [everything[0]]
    assert ids("--job", "cli.greet", "--tenant", "acme") == everything
    # The seeded runs were created on a frozen clock at 2026-01-01T00:00:00Z.
    assert ids("--since", "1h") == []
    assert ids("--since", "2025-12-31T23:00:00Z", "--until", "2026-01-01T01:00:00Z") == everything
    first = ferry("jobs", "ls", "--json", "--limit", "2").envelope["data"]
    assert [r["id"] for r in first["runs"]] == everything[:2]
    assert ids("--limit", "2", "--before", first["nextBeforeId"]) == everything[2:]


async def test_jobs_ls_refuses_a_bad_filter_with_its_code_and_a_non_zero_exit(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    result = ferry("jobs", "ls", "--state", "finished", "--json")
    assert result.code == 1
    assert result.envelope["ok"] is False
    [finding] = result.envelope["findings"]
    assert finding["code"] == "X_INVARIANT" and "finished" in finding["message"]
    golden("refused", result.envelope)
    human = ferry("jobs", "ls", "--limit", "0")
    assert human.code == 1 and human.stdout == ""
    assert human.stderr.startswith("X_OUT_OF_RANGE: limit '0'")


@pytest.mark.parametrize(
    ("word", "value", "named", "code"),
    [
        ("--before", "99999999999999999999999", "before", "X_RUN_ID_INVALID"),
        ("--before", "0", "before", "X_RUN_ID_INVALID"),
        ("--tenant", "\udcff", "tenant", "X_INVARIANT"),
        ("--since", "99999999999999999999d", "since", "X_OUT_OF_RANGE"),
        ("--limit", "\u00b2", "limit", "X_OUT_OF_RANGE"),
    ],
)
async def test_jobs_ls_refuses_a_filter_no_run_can_match_with_its_code_and_no_traceback(
    ferry: Ferry, seeded: PostgresJobDriver, word: str, value: str, named: str, code: str
) -> None:
    """(A NUL cannot reach argv at all; the dashboard's test covers ``?queue=%00``.)"""
    result = ferry("jobs", "ls", word, value, "--json")
    assert result.code == 1 and "Traceback" not in result.stderr
    [finding] = result.envelope["findings"]
    assert finding["code"] == code and finding["message"].startswith(named)
    assert finding["fix"]


async def test_jobs_ls_prints_a_readable_table(ferry: Ferry, seeded: PostgresJobDriver) -> None:
    result = ferry("jobs", "ls")
    assert result.code == 0
    header = result.stdout.splitlines()[1]
    for column in ("id", "job", "queue", "state", "attempts", "created", "last error"):
        assert column in header
    assert "cli.greet" in result.stdout and "X_JOB_FAILED" in result.stdout


async def test_jobs_show_reports_input_steps_progress_error_and_timestamps(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    dead = ferry("jobs", "ls", "--state", "dead", "--json").envelope["data"]["runs"][0]["id"]
    envelope = ferry("jobs", "show", dead, "--json").envelope
    run = envelope["data"]
    assert run["summary"]["state"] == "dead" and run["summary"]["attempts"] == 2
    assert run["payload"] == {"name": "bob", "fail": True}
    assert [(s["name"], s["result"]) for s in run["steps"]] == [
        ("compose", "hello bob"),
        ("deliver", {"to": "bob"}),
    ]
    assert run["progress"] == {"current": 2, "total": 2}
    assert run["summary"]["lastError"]["code"] == "X_JOB_FAILED"
    golden("jobs_show", envelope)
    text = ferry("jobs", "show", dead).stdout
    for shown in ("X_JOB_FAILED", "compose", "deliver", "idempotency key", "lease holder", "2/2"):
        assert shown in text


async def test_jobs_show_reports_a_result_a_parent_and_its_children(
    ferry: Ferry, seeded: PostgresJobDriver, cli_app: ModuleType
) -> None:
    parent = await cli_app.seed_roll_call(seeded, seeded.clock)
    run = ferry("jobs", "show", parent, "--json").envelope["data"]
    assert run["result"] == ["completed", "completed"]
    assert (run["parentId"], run["childrenCount"], run["childrenPending"]) == (None, 2, 0)
    children = run["children"]
    assert [c["name"] for c in children] == ["cli.greet", "cli.greet"]
    assert {c["state"] for c in children} == {"completed"}
    child = ferry("jobs", "show", children[0]["id"], "--json").envelope["data"]
    assert child["parentId"] == parent and child["result"] == {"said": "hello team-0"}
    text = ferry("jobs", "show", parent).stdout
    for shown in ("children", "2 (0 not ended)", children[1]["id"], '["completed","completed"]'):
        assert shown in text
    child_text = ferry("jobs", "show", children[0]["id"]).stdout
    assert any(line.split()[:2] == ["parent", parent] for line in child_text.splitlines())


async def test_jobs_show_of_an_unknown_run_is_refused_with_x_run_not_found(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    result = ferry("jobs", "show", "424242", "--json")
    assert result.code == 1
    assert result.envelope["findings"][0]["code"] == "X_RUN_NOT_FOUND"


async def test_jobs_retry_requeues_a_dead_run_and_refuses_a_completed_one(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    runs = ferry("jobs", "ls", "--json").envelope["data"]["runs"]
    dead, completed = runs[1]["id"], runs[2]["id"]
    retried = ferry("jobs", "retry", dead, "--json")
    assert retried.code == 0 and retried.envelope["data"] == {"id": dead, "state": "queued"}
    golden("jobs_retry", retried.envelope)
    run = await seeded.introspect.get_run(dead)
    assert run is not None and (run.summary.state, run.summary.attempts) == ("queued", 0)
    refused = ferry("jobs", "retry", completed, "--json")
    assert refused.code == 1
    assert refused.envelope["findings"][0]["code"] == "X_RUN_STATE"


async def test_jobs_cancel_ends_a_queued_run_and_flags_a_running_one_for_its_worker(
    ferry: Ferry, seeded: PostgresJobDriver, cli_app: ModuleType
) -> None:
    queued = ferry("jobs", "ls", "--state", "queued", "--json").envelope["data"]["runs"][0]["id"]
    cancelled = ferry("jobs", "cancel", queued, "--json")
    assert cancelled.code == 0
    assert cancelled.envelope["data"] == {
        "id": queued,
        "state": "cancelled",
        "cancelRequested": False,
    }
    golden("jobs_cancel", cancelled.envelope)

    previous = set_job_driver(seeded)
    try:
        job_id = (await cli_app.greet.enqueue({"name": "dan"})).job_id
    finally:
        set_job_driver(previous)
    [claimed] = await seeded.claim(ClaimOptions("w1", 600_000, 1))
    assert claimed.id == job_id
    flagged = ferry("jobs", "cancel", claimed.id, "--json").envelope["data"]
    assert flagged == {"id": claimed.id, "state": "running", "cancelRequested": True}
    run = await seeded.introspect.get_run(claimed.id)
    assert run is not None and run.cancel_requested_at_ms is not None


async def test_jobs_stats_reports_depth_states_and_throughput_per_queue(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    result = ferry("jobs", "stats", "--json")
    assert result.code == 0
    queues = {q["queue"]: q for q in result.envelope["data"]["queues"]}
    assert queues["default"]["counts"]["completed"] == 1
    assert queues["default"]["counts"]["dead"] == 1
    assert queues["later"]["depth"] == 1
    golden("jobs_stats", result.envelope)
    assert "per min" in ferry("jobs", "stats").stdout


async def test_queues_pause_stops_claims_until_resume(
    ferry: Ferry, seeded: PostgresJobDriver
) -> None:
    paused = ferry("queues", "pause", "later", "--json")
    assert paused.code == 0 and paused.envelope["data"] == {"queue": "later", "paused": True}
    golden("queues_pause", paused.envelope)
    assert await seeded.claim(ClaimOptions("w1", 30_000, 10, queues=["later"])) == []
    assert ferry("queues", "resume", "later", "--json").envelope["data"]["paused"] is False
    assert len(await seeded.claim(ClaimOptions("w1", 30_000, 10, queues=["later"]))) == 1
