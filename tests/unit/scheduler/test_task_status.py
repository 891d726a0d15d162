"""What ``ferry tasks list/show`` report: the spec's fields, instants in the task's zone."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from digest_tasks import digest_task

from ferry._operations.schedules import render_instant, task_status
from ferry._scheduler import TaskTick

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
    "lastFiredAt",  # every …AtMs instant has its ISO 8601 twin (the envelope's rule)
    "paused",
}


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).astimezone(UTC).timestamp() * 1000)


def test_next_carries_the_tasks_own_offset_across_a_spring_forward() -> None:
    nightly = digest_task("0 3 * * *", "America/New_York")
    before = task_status(nightly, None, paused=False, now_ms=ms("2026-03-05T12:00:00+00:00"))
    after = task_status(nightly, None, paused=False, now_ms=ms("2026-03-08T12:00:00+00:00"))
    assert before["next"] == "2026-03-06T03:00:00-05:00"
    assert after["next"] == "2026-03-09T03:00:00-04:00"
    assert after["nextMs"] == ms("2026-03-09T03:00:00-04:00")


def test_the_spec_example_renders_utc_as_z() -> None:
    status = task_status(
        digest_task("0 3 * * *", "UTC", name="nightlyDigest"),
        None,
        paused=False,
        now_ms=ms("2026-08-11T12:00:00+00:00"),
    )
    assert status["nextMs"] == 1786503600000
    assert status["next"] == "2026-08-12T03:00:00Z"
    assert render_instant(ms("2026-01-10T09:00:00+00:00"), ZoneInfo("Europe/London")).endswith("Z")


def test_list_fields_are_exactly_the_spec_s_and_last_is_null_before_the_first_fire() -> None:
    status = task_status(digest_task(), None, paused=False, now_ms=ms("2026-01-01T00:00:00+00:00"))
    assert set(status) == LIST_FIELDS
    assert (status["last"], status["lastMs"], status["lastFiredAtMs"]) == (None, None, None)
    assert status["jobs"] == ["send_digest"]
    assert (status["kind"], status["catchUp"], status["maxCatchUp"]) == ("task", "skip", 10)


def test_last_comes_from_the_tick_row_and_show_adds_describe_and_next_occurrences() -> None:
    occurrence = ms("2026-01-01T03:00:00+00:00")
    tick = TaskTick("nightly_digest", occurrence, occurrence, occurrence + 1_500)
    status = task_status(digest_task(), tick, paused=True, now_ms=occurrence + 60_000, next_count=3)
    assert set(status) == LIST_FIELDS | {"describe", "nextOccurrences"}
    assert status["last"] == "2026-01-01T03:00:00Z"
    assert (status["lastMs"], status["lastFiredAtMs"]) == (occurrence, occurrence + 1_500)
    assert status["paused"] is True
    assert status["describe"] == "at 03:00 every day"
    assert [o["at"] for o in status["nextOccurrences"]] == [
        "2026-01-02T03:00:00Z",
        "2026-01-03T03:00:00Z",
        "2026-01-04T03:00:00Z",
    ]
