"""Property: any call of any admin MCP tool — through the official MCP SDK client, to a
real ``ferry mcp`` process over stdio on real Postgres — answers the envelope: a success,
or an ``X_*`` refusal marked as a tool error; never a non-envelope, a protocol error or a
dead server. A refused call changed nothing, and a huge ``count`` or ``limit`` is refused,
not computed. Afterwards a worker completes a normal run.

Budget: 3 sessions of 50 random calls (150 calls), each checked against the store.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from support.fuzz import normal_run_state, numbers, words

from ferry._mcp import MANAGE_TOOLS, READ_TOOLS
from ferry._scheduler.store import SchedulerStore
from ferry.drivers import PostgresJobDriver
from ferry.drivers.protocol import RunFilter

from .test_mcp import MANAGE_TOKEN, _stdio


def _encodable(value: str) -> bool:
    """Whether the SDK client can send ``value``: it serialises to UTF-8, which has no
    lone surrogates (the server's names refuse them too, as the CLI fuzz shows)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


text = (words | st.sampled_from(["1", "2", "3"])).filter(_encodable)
maybe = st.none() | text
FILTER = {
    "queue": maybe,
    "job": maybe,
    "state": maybe,
    "view": st.none() | st.sampled_from(["scheduled", "retrying", "sleeping", "dead"]) | text,
    "tenant": maybe,
    "since": maybe,
    "until": maybe,
    "key": maybe,
    "error_code": maybe,
    "error_text": maybe,
    "input": st.none() | st.sampled_from(['{"name": "bob"}', "{}", "[1]", "{"]) | text,
}
"""The filter words every listing, bulk preview and bulk action takes."""
action = st.sampled_from(["retry", "cancel", "delete"]) | text
ARGUMENTS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "admin.x_jobs.list": st.fixed_dictionaries(
        {}, optional={**FILTER, "before": maybe | numbers, "limit": st.none() | numbers}
    ),
    "admin.x_jobs.bulk-preview": st.fixed_dictionaries({"action": action}, optional=FILTER),
    "admin.x_workers.list": st.just({}),
    "admin.x_jobs.show": st.fixed_dictionaries({"id": text | numbers}),
    "admin.x_jobs.stats": st.fixed_dictionaries({}, optional={"window": text}),
    "admin.x_job_tasks.list": st.just({}),
    "admin.x_job_tasks.show": st.fixed_dictionaries(
        {"name": st.sampled_from(["cli.nightly"]) | text}, optional={"count": numbers}
    ),
    "admin.action.job.retry": st.fixed_dictionaries({"id": text | numbers}),
    "admin.action.job.cancel": st.fixed_dictionaries({"id": text | numbers}),
    "admin.action.job.queue.pause": st.fixed_dictionaries(
        {"queue": text}, optional={"create": st.booleans()}
    ),
    "admin.action.job.queue.resume": st.fixed_dictionaries({"queue": text}),
    "admin.action.job.task.pause": st.fixed_dictionaries({"name": text}),
    "admin.action.job.task.resume": st.fixed_dictionaries({"name": text}),
    "admin.action.job.task.run-now": st.fixed_dictionaries({"name": text}),
    **{
        f"admin.action.job.bulk.{verb}": st.fixed_dictionaries({"selection": text}, optional=FILTER)
        for verb in ("retry", "cancel", "delete")
    },
}
assert set(ARGUMENTS) == {*READ_TOOLS, *MANAGE_TOOLS}, "a tool without a strategy"
calls = st.sampled_from(sorted(ARGUMENTS)).flatmap(
    lambda tool: st.tuples(st.just(tool), ARGUMENTS[tool])
)


async def _state(driver: PostgresJobDriver) -> Any:
    """What a refused call must not change: every run, the queues' pauses, the tasks'."""
    runs = await driver.introspect.list_runs(RunFilter(limit=500))
    queues = await driver.stats()
    paused_tasks = await SchedulerStore(driver).paused_tasks()
    return (runs, [(q.queue, q.paused) for q in queues], sorted(paused_tasks))


@settings(
    max_examples=3,
    deadline=None,
    # A session per example costs seconds: a failure is reported as drawn, not shrunk.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(calls, min_size=50, max_size=50))
async def test_any_tool_call_answers_the_envelope_and_a_refusal_changes_nothing(
    seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str, batch: list[Any]
) -> None:
    async with _stdio(postgres_dsn, pg_schema, MANAGE_TOKEN) as client:
        for tool, arguments in batch:
            before = await _state(seeded)
            result = await client.call_tool(tool, arguments)
            envelope = result.structured_content
            assert isinstance(envelope, dict) and "ok" in envelope, (tool, arguments, result)
            assert bool(result.is_error) == (not envelope["ok"]), (tool, arguments, envelope)
            if not envelope["ok"]:
                [finding] = envelope["findings"]
                assert finding["code"].startswith("X_") and finding["fix"], (tool, finding)
                event(finding["code"])
                assert await _state(seeded) == before, f"refused {tool} {arguments} but acted"
        listed = await client.call_tool("admin.x_jobs.list", {})
        assert listed.structured_content is not None and listed.structured_content["ok"]


async def test_after_the_fuzz_a_worker_completes_a_normal_run(
    seeded: PostgresJobDriver, cli_app: Any
) -> None:
    state = await normal_run_state(seeded, cli_app.greet, {"name": "after-the-mcp-fuzz"})
    assert state == "completed"


async def test_a_huge_count_or_limit_is_refused_not_computed(
    seeded: PostgresJobDriver, postgres_dsn: str, pg_schema: str
) -> None:
    """A read-only caller once grew the server past 14 GB with ``count`` (every next
    occurrence was computed); now the bound answers first."""
    async with _stdio(postgres_dsn, pg_schema, MANAGE_TOKEN) as client:
        for tool, arguments, field in [
            ("admin.x_job_tasks.show", {"name": "cli.nightly", "count": 10**9}, "count"),
            ("admin.x_job_tasks.show", {"name": "cli.nightly", "count": 101}, "count"),
            ("admin.x_jobs.list", {"limit": 10**30}, "limit"),
            ("admin.x_jobs.show", {"id": "9" * 5_000}, "run id"),
            ("admin.x_jobs.stats", {"window": "99999999999999999999d"}, "window"),
        ]:
            result = await client.call_tool(tool, arguments)
            envelope = result.structured_content
            assert result.is_error and envelope is not None and not envelope["ok"]
            [finding] = envelope["findings"]
            assert finding["code"] in ("X_OUT_OF_RANGE", "X_RUN_ID_INVALID"), finding
            assert finding["message"].startswith(field), finding
        shown = await client.call_tool(
            "admin.x_job_tasks.show", {"name": "cli.nightly", "count": 100}
        )
        assert shown.structured_content is not None
        assert len(shown.structured_content["data"]["nextOccurrences"]) == 100
