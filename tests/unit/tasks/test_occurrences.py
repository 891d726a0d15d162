"""Fire instants of a cron in an IANA zone, DST rules included, checked against a brute force.

The expectations here never come from the code under test: a reference walker steps through
every UTC minute of a window, reads the zone's wall clock with zoneinfo, and applies the spec's
rules itself — a fixed time fires on the first pass of a repeated hour only, an interval on both;
any wall time the clock skips fires at the first instant after the skip (the zone's next valid
instant), so a night's skipped times make one fire there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest

from ferry.errors import FerryError
from ferry.tasks import occurrences
from ferry.tasks._occurrences import next_occurrences, validate_zone

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS
NEW_YORK = "America/New_York"


def ms(iso: str) -> int:
    """Epoch ms of an ISO-8601 instant that carries its offset."""
    return int(datetime.fromisoformat(iso).timestamp()) * 1000


def iso(instant_ms: int) -> str:
    return datetime.fromtimestamp(instant_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%MZ")


# -- the independent reference ---------------------------------------------------------------

# fmt: off
_NAMES = {
    "SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6,
    "JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
    "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12,
}
# fmt: on


def _reference_values(field: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for item in field.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            first, last = low, high
        elif "-" in base:
            first, last = (int(_NAMES.get(end.upper(), end)) for end in base.split("-"))
        else:
            first = int(_NAMES.get(base.upper(), base))
            last = high if step else first
        values.update(range(first, last + 1, int(step or 1)))
    return values


@dataclass(frozen=True)
class ReferenceCron:
    """A second, deliberately plain reading of a cron, used only to derive expectations."""

    minutes: set[int]
    hours: set[int]
    days_of_month: set[int]
    months: set[int]
    days_of_week: set[int]
    either_day: bool
    interval: bool

    @classmethod
    def read(cls, cron: str) -> ReferenceCron:
        minute, hour, dom, month, dow = cron.split()
        return cls(
            minutes=_reference_values(minute, 0, 59),
            hours=_reference_values(hour, 0, 23),
            days_of_month=_reference_values(dom, 1, 31),
            months=_reference_values(month, 1, 12),
            days_of_week={day % 7 for day in _reference_values(dow, 0, 7)},
            either_day=not dom.startswith("*") and not dow.startswith("*"),
            interval=any(re.fullmatch(r"\*(/\d+)?", field) for field in (minute, hour)),
        )

    def matches(self, wall: datetime) -> bool:
        if not (
            wall.minute in self.minutes and wall.hour in self.hours and wall.month in self.months
        ):
            return False
        on_date = wall.day in self.days_of_month
        on_weekday = (wall.isoweekday() % 7) in self.days_of_week
        return on_date or on_weekday if self.either_day else on_date and on_weekday


@dataclass(frozen=True)
class WallMinute:
    """One UTC minute as the zone's clock shows it, and the wall minutes the clock skipped."""

    instant_ms: int
    wall: datetime
    second_pass: bool
    skipped: tuple[datetime, ...]


@cache
def _wall_minutes(tz: str, start_ms: int, end_ms: int) -> tuple[WallMinute, ...]:
    zone = ZoneInfo(tz)
    first = (start_ms // MINUTE_MS + 1) * MINUTE_MS
    previous = datetime.fromtimestamp((first - MINUTE_MS) // 1000, zone).replace(tzinfo=None)
    minutes = []
    for instant_ms in range(first, end_ms + 1, MINUTE_MS):
        local = datetime.fromtimestamp(instant_ms // 1000, zone)
        wall = local.replace(tzinfo=None)
        skipped: list[datetime] = []
        step = previous + timedelta(minutes=1)
        while step < wall:
            skipped.append(step)
            step += timedelta(minutes=1)
        minutes.append(WallMinute(instant_ms, wall, local.fold == 1, tuple(skipped)))
        previous = wall
    return tuple(minutes)


def reference_fires(cron: str, tz: str, start_ms: int, end_ms: int) -> list[int]:
    """Brute force: every UTC minute in (start_ms, end_ms], with the spec's DST rules."""
    schedule = ReferenceCron.read(cron)
    fires = []
    for minute in _wall_minutes(tz, start_ms, end_ms):
        # repeated hour: a fixed time only on its first pass, an interval on both
        fires_now = (
            minute.wall.minute in schedule.minutes  # a cheap reject before the full match
            and schedule.matches(minute.wall)
            and (schedule.interval or not minute.second_pass)
        )
        # skipped wall times, of any schedule: they fire at the first instant after the skip
        fires_for_skipped = minute.skipped and any(map(schedule.matches, minute.skipped))
        if fires_now or fires_for_skipped:
            fires.append(minute.instant_ms)
    return fires


def offset_changes(tz: str, year: int) -> list[int]:
    """The instants (ms) in a year at which the zone's UTC offset changes, found by scanning."""
    zone = ZoneInfo(tz)

    def offset(instant_ms: int) -> timedelta | None:
        return datetime.fromtimestamp(instant_ms // 1000, zone).utcoffset()

    changes = []
    day = int(datetime(year, 1, 1, tzinfo=UTC).timestamp()) * 1000
    while day < int(datetime(year + 1, 1, 1, tzinfo=UTC).timestamp()) * 1000:
        if offset(day) != offset(day + DAY_MS):
            before, after = day, day + DAY_MS
            while after - before > MINUTE_MS:
                middle = (before + after) // 2 // MINUTE_MS * MINUTE_MS
                before, after = (
                    (before, middle) if offset(middle) != offset(before) else (middle, after)
                )
            changes.append(after)
        day += DAY_MS
    return changes


# -- the table: zones x years x schedules, against the reference -----------------------------

CRONS = [
    "0 3 * * *",  # fixed, after every transition hour
    "30 2 * * *",  # fixed, inside the usual spring-forward gap
    "30 1 * * *",  # fixed, inside the usual fall-back overlap
    "0 0 * * *",  # fixed at midnight: inside Santiago's gap
    "15 0,23 * * *",  # fixed around midnight: Santiago's gap and overlap
    "0,20,40 2 * * *",  # several fixed times in one gap: one fire at the transition
    "*/30 * * * *",  # interval through both passes; its gap times fire at the transition
    "0 * * * *",  # interval by the hour field
    "*/15 2 * * *",  # interval confined to the gap hour: one fire at the transition
    "45 1 * * SUN",  # fixed, weekday-gated (most transitions are on Sundays)
    "0 12 1,15 * 6",  # dom OR dow
]
DST_ZONES = [
    NEW_YORK,
    "Europe/Berlin",
    "Australia/Lord_Howe",  # a 30-minute shift
    "America/Santiago",  # transitions at midnight
    "Australia/Sydney",
    "Pacific/Auckland",
]
#: repeated hours that straddle midnight: St John's and Goose Bay fell back from 00:01 to 23:01
#: until 2011, and Casey once fell back three hours
STRADDLING = [("America/St_Johns", 2010), ("America/Goose_Bay", 2008), ("Antarctica/Casey", 2010)]
STEADY_ZONES = [
    "America/Sao_Paulo",  # no DST after February 2019
    "Asia/Tehran",  # no DST after September 2022
    "Europe/Istanbul",  # no DST since 2016
    "Asia/Kolkata",  # +05:30
    "UTC",
]
YEARS = range(2019, 2031)


def _cases() -> Iterator[tuple[str, int]]:
    for tz in DST_ZONES:
        yield from ((tz, year) for year in YEARS)
    for tz in STEADY_ZONES:
        # Sao Paulo's last transition is in 2019, Tehran's in 2022
        yield from ((tz, year) for year in (2019, 2022, 2023, 2030))
    yield from STRADDLING


def _windows(tz: str, year: int) -> list[tuple[int, int]]:
    """A day each side of every offset change; zones without one get their old DST dates."""
    anchors = offset_changes(tz, year) or [
        int(datetime(year, month, day, 3, tzinfo=UTC).timestamp()) * 1000
        for month, day in ((3, 22), (11, 3))
    ]
    return [(anchor - DAY_MS - 7 * MINUTE_MS, anchor + DAY_MS) for anchor in anchors]


@pytest.mark.parametrize(("tz", "year"), list(_cases()), ids=lambda value: str(value))
def test_fires_match_brute_force_reference_across_zones_years_and_transitions(
    tz: str, year: int
) -> None:
    for start_ms, end_ms in _windows(tz, year):
        for cron in CRONS:
            expected = reference_fires(cron, tz, start_ms, end_ms)
            actual = occurrences(cron, tz, start_ms, end_ms)
            assert [iso(f) for f in actual] == [iso(f) for f in expected], (cron, tz, year)


def test_reference_table_really_crosses_gaps_and_overlaps() -> None:
    # The table above proves little unless its windows hold both kinds of transition.
    changes = {tz: offset_changes(tz, 2026) for tz in DST_ZONES}
    assert all(len(found) == 2 for found in changes.values()), changes
    assert offset_changes("America/Sao_Paulo", 2019) != []
    assert offset_changes("America/Sao_Paulo", 2020) == []
    assert offset_changes("Asia/Tehran", 2022) != []
    assert offset_changes("Asia/Tehran", 2023) == []
    assert offset_changes("Europe/Istanbul", 2019) == []


def test_brute_force_over_a_whole_month_with_a_transition_in_it() -> None:
    start, end = ms("2026-10-20T00:00Z"), ms("2026-11-20T00:00Z")
    for cron in ["*/10 * * * *", "0 1 * * *", "30 1 * * *", "7 */3 * * 0"]:
        assert occurrences(cron, NEW_YORK, start, end) == reference_fires(
            cron, NEW_YORK, start, end
        )


# -- the spec's named cases, by hand ---------------------------------------------------------


def test_fixed_time_keeps_its_local_hour_across_spring_forward() -> None:
    # 03:00 is EST (08:00Z) before the switch and EDT (07:00Z) from 2026-03-08 on.
    fires = occurrences("0 3 * * *", NEW_YORK, ms("2026-03-06T00:00Z"), ms("2026-03-10T00:00Z"))
    assert [iso(f) for f in fires] == [
        "2026-03-06T08:00Z",
        "2026-03-07T08:00Z",
        "2026-03-08T07:00Z",
        "2026-03-09T07:00Z",
    ]


def test_fixed_time_keeps_its_local_hour_across_fall_back() -> None:
    fires = occurrences("0 3 * * *", NEW_YORK, ms("2026-10-31T00:00Z"), ms("2026-11-03T00:00Z"))
    assert [iso(f) for f in fires] == [
        "2026-10-31T07:00Z",
        "2026-11-01T08:00Z",
        "2026-11-02T08:00Z",
    ]


def test_fixed_time_in_the_spring_forward_gap_fires_at_the_next_valid_instant() -> None:
    # 02:30 never happens on 2026-03-08; the clock jumps from 01:59:59 EST to 03:00 EDT = 07:00Z.
    fires = occurrences("30 2 * * *", NEW_YORK, ms("2026-03-07T00:00Z"), ms("2026-03-10T00:00Z"))
    assert [iso(f) for f in fires] == [
        "2026-03-07T07:30Z",
        "2026-03-08T07:00Z",
        "2026-03-09T06:30Z",
    ]


def test_several_gap_times_of_one_schedule_fire_once_at_the_transition() -> None:
    fires = occurrences(
        "0,30 2,3 * * *", NEW_YORK, ms("2026-03-08T00:00Z"), ms("2026-03-09T00:00Z")
    )
    assert [iso(f) for f in fires] == ["2026-03-08T07:00Z", "2026-03-08T07:30Z"]


def test_fixed_time_in_the_fall_back_overlap_fires_once_on_the_first_pass() -> None:
    # 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST); a fixed time takes the first.
    fires = occurrences("30 1 * * *", NEW_YORK, ms("2026-10-31T12:00Z"), ms("2026-11-01T12:00Z"))
    assert [iso(f) for f in fires] == ["2026-11-01T05:30Z"]


def test_interval_runs_through_both_passes_of_the_repeated_hour() -> None:
    fires = occurrences("*/30 * * * *", NEW_YORK, ms("2026-11-01T04:00Z"), ms("2026-11-01T07:00Z"))
    assert [iso(f) for f in fires] == [
        "2026-11-01T04:30Z",  # 00:30 EDT
        "2026-11-01T05:00Z",  # 01:00 EDT
        "2026-11-01T05:30Z",  # 01:30 EDT
        "2026-11-01T06:00Z",  # 01:00 EST, the second pass
        "2026-11-01T06:30Z",  # 01:30 EST
        "2026-11-01T07:00Z",  # 02:00 EST
    ]


def test_hourly_by_hour_field_runs_through_both_passes() -> None:
    fires = occurrences("0 * * * *", NEW_YORK, ms("2026-11-01T04:30Z"), ms("2026-11-01T07:30Z"))
    assert [iso(f) for f in fires] == [
        "2026-11-01T05:00Z",
        "2026-11-01T06:00Z",
        "2026-11-01T07:00Z",
    ]


def test_an_interval_fires_its_gap_times_once_at_the_transition() -> None:
    # 02:00 and 02:30 never happen on 2026-03-08: they fire at 03:00 EDT (07:00Z), together
    # with 03:00's own fire — one instant, one fire.
    fires = occurrences("*/30 * * * *", NEW_YORK, ms("2026-03-08T06:00Z"), ms("2026-03-08T08:00Z"))
    assert [iso(f) for f in fires] == [
        "2026-03-08T06:30Z",  # 01:30 EST
        "2026-03-08T07:00Z",  # 02:00, 02:30 (skipped) and 03:00 EDT
        "2026-03-08T07:30Z",
        "2026-03-08T08:00Z",
    ]
    gap_hour_only = occurrences(
        "*/15 2 * * *", NEW_YORK, ms("2026-03-08T05:00Z"), ms("2026-03-08T09:00Z")
    )
    assert [iso(f) for f in gap_hour_only] == ["2026-03-08T07:00Z"]


#: The spec's gap rule on the schedules that used to skip their gap times: (cron, zone,
#: window start, window end, fires). Each night's gap times make one fire at the transition.
GAP_TABLE = [
    # New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00Z)
    (
        "15 */2 * * *",
        NEW_YORK,
        "2026-03-08T04:00Z",
        "2026-03-08T09:00Z",
        [
            "2026-03-08T05:15Z",
            "2026-03-08T07:00Z",
            "2026-03-08T08:15Z",
        ],  # 00:15, 02:15→03:00, 04:15
    ),
    (
        "*/10 2 * * *",
        NEW_YORK,
        "2026-03-07T00:00Z",
        "2026-03-09T00:00Z",
        [f"2026-03-07T07:{m:02d}Z" for m in range(0, 60, 10)] + ["2026-03-08T07:00Z"],
    ),
    # Lord Howe, 2026-10-04: 02:00 +10:30 jumps to 02:30 +11 (15:30Z on the 3rd)
    (
        "0 * * * *",
        "Australia/Lord_Howe",
        "2026-10-03T14:00Z",
        "2026-10-03T17:00Z",
        ["2026-10-03T14:30Z", "2026-10-03T15:30Z", "2026-10-03T16:00Z", "2026-10-03T17:00Z"],
    ),
    # Chatham, 2026-09-27: 02:45 +12:45 jumps to 03:45 +13:45 (14:00Z on the 26th); 03:00 and
    # 03:30 never happen and fire once, at the transition
    (
        "*/30 1-3 * * *",
        "Pacific/Chatham",
        "2026-09-26T12:00Z",
        "2026-09-26T15:00Z",
        [
            "2026-09-26T12:15Z",  # 01:00 +12:45
            "2026-09-26T12:45Z",
            "2026-09-26T13:15Z",
            "2026-09-26T13:45Z",  # 02:30 +12:45
            "2026-09-26T14:00Z",  # 03:00 and 03:30, at 03:45 +13:45
        ],
    ),
]


@pytest.mark.parametrize(("cron", "tz", "start", "end", "expected"), GAP_TABLE)
def test_gap_times_of_every_schedule_fire_at_the_zones_next_valid_instant(
    cron: str, tz: str, start: str, end: str, expected: list[str]
) -> None:
    fires = occurrences(cron, tz, ms(start), ms(end))
    assert [iso(f) for f in fires] == expected
    assert fires == reference_fires(cron, tz, ms(start), ms(end))


def test_thirty_minute_shift_in_lord_howe() -> None:
    tz = "Australia/Lord_Howe"
    # 2026-10-04 02:00 +10:30 jumps to 02:30 +11: 02:15 fires at the transition, 15:30Z the 3rd.
    spring = occurrences("15 2 * * *", tz, ms("2026-10-03T00:00Z"), ms("2026-10-04T00:00Z"))
    assert [iso(f) for f in spring] == ["2026-10-03T15:30Z"]
    # 2026-04-05 02:00 +11 falls back to 01:30 +10:30: 01:45 happens twice.
    fixed = occurrences("45 1 * * *", tz, ms("2026-04-04T00:00Z"), ms("2026-04-05T00:00Z"))
    assert [iso(f) for f in fixed] == ["2026-04-04T14:45Z"]
    interval = occurrences("*/15 * * * *", tz, ms("2026-04-04T14:20Z"), ms("2026-04-04T15:30Z"))
    assert [iso(f) for f in interval] == [
        "2026-04-04T14:30Z",  # 01:30 +11
        "2026-04-04T14:45Z",  # 01:45 +11
        "2026-04-04T15:00Z",  # 01:30 +10:30, the second pass
        "2026-04-04T15:15Z",  # 01:45 +10:30
        "2026-04-04T15:30Z",  # 02:00 +10:30
    ]


def test_santiago_midnight_that_never_happens_fires_at_one_oclock() -> None:
    # 2026-09-05 24:00 -04 jumps to 2026-09-06 01:00 -03 = 04:00Z: that day starts at 01:00.
    fires = occurrences(
        "0 0 * * *", "America/Santiago", ms("2026-09-04T12:00Z"), ms("2026-09-07T12:00Z")
    )
    assert [iso(f) for f in fires] == [
        "2026-09-05T04:00Z",
        "2026-09-06T04:00Z",
        "2026-09-07T03:00Z",
    ]


def test_repeated_hour_straddling_midnight_is_found_from_either_local_date() -> None:
    # 2010-11-07 00:01 NDT (02:31Z) fell back to 2010-11-06 23:01 NST: after 00:00:30 NDT on the
    # 7th, the clock reads the 6th again, and the 7th's midnight comes round a second time.
    tz = "America/St_Johns"
    start, end = ms("2010-11-07T02:30:30Z"), ms("2010-11-07T04:00Z")
    interval = occurrences("*/15 * * * *", tz, start, end)
    assert interval == reference_fires("*/15 * * * *", tz, start, end)
    assert [iso(f) for f in interval] == [
        "2010-11-07T02:45Z",  # 23:15 NST on the 6th, the second pass
        "2010-11-07T03:00Z",
        "2010-11-07T03:15Z",
        "2010-11-07T03:30Z",  # 00:00 NST on the 7th, the second pass
        "2010-11-07T03:45Z",
        "2010-11-07T04:00Z",
    ]
    # a window ending on the 6th's second pass still holds the 7th's first midnight
    midnight = occurrences("0 0 * * *", tz, ms("2010-11-07T02:00Z"), ms("2010-11-07T03:00Z"))
    assert [iso(f) for f in midnight] == ["2010-11-07T02:30Z"]


def test_southern_hemisphere_springs_forward_in_spring_there() -> None:
    # Sydney: 2026-10-04 02:00 AEST jumps to 03:00 AEDT = 2026-10-03T16:00Z.
    fires = occurrences(
        "30 2 * * *", "Australia/Sydney", ms("2026-10-02T00:00Z"), ms("2026-10-05T00:00Z")
    )
    assert [iso(f) for f in fires] == [
        "2026-10-02T16:30Z",
        "2026-10-03T16:00Z",
        "2026-10-04T15:30Z",
    ]
    # Auckland: 2026-04-05 03:00 NZDT falls back to 02:00 NZST; 02:30 fires once, at 13:30Z.
    auckland = occurrences(
        "30 2 * * *", "Pacific/Auckland", ms("2026-04-04T00:00Z"), ms("2026-04-05T00:00Z")
    )
    assert [iso(f) for f in auckland] == ["2026-04-04T13:30Z"]


@pytest.mark.parametrize(
    ("tz", "around"),
    [
        ("America/Sao_Paulo", "2020-11-01"),  # where DST used to start
        ("America/Sao_Paulo", "2026-02-15"),  # where DST used to end
        ("Asia/Tehran", "2023-03-22"),
        ("Asia/Tehran", "2026-09-22"),
        ("Europe/Istanbul", "2026-03-29"),
        ("Europe/Istanbul", "2026-10-25"),
        ("Asia/Kolkata", "2026-03-08"),
        ("UTC", "2026-03-08"),
    ],
)
def test_zone_without_dst_fires_every_24_hours(tz: str, around: str) -> None:
    middle = ms(f"{around}T12:00Z")
    fires = occurrences("0 3 * * *", tz, middle - 5 * DAY_MS, middle + 5 * DAY_MS)
    assert len(fires) == 10
    assert {later - earlier for earlier, later in pairwise(fires)} == {DAY_MS}


# -- days, names, window edges ---------------------------------------------------------------


def test_day_of_month_and_day_of_week_both_restricted_fire_on_either() -> None:
    fires = occurrences("0 0 13 * 5", "UTC", ms("2025-12-31T12:00Z"), ms("2026-12-31T12:00Z"))
    days = [date(2026, 1, 1) + timedelta(days=n) for n in range(365)]
    expected = [day for day in days if day.day == 13 or day.isoweekday() == 5]
    assert [datetime.fromtimestamp(f / 1000, UTC).date() for f in fires] == expected
    assert date(2026, 2, 13) in expected and date(2026, 1, 13).isoweekday() != 5


def test_month_and_weekday_names_select_weekdays_of_the_first_quarter() -> None:
    tz = ZoneInfo("Europe/Berlin")
    fires = occurrences(
        "0 9 * JAN-MAR MON-FRI", "Europe/Berlin", ms("2026-01-01T00:00Z"), ms("2027-01-01T00:00Z")
    )
    days = [date(2026, 1, 1) + timedelta(days=n) for n in range(90)]
    expected = [
        int(datetime(d.year, d.month, d.day, 9, tzinfo=tz).timestamp()) * 1000
        for d in days
        if d.isoweekday() <= 5
    ]
    assert fires == expected
    assert iso(fires[-1]) == "2026-03-31T07:00Z"  # 09:00 CEST, after Berlin's switch


def test_day_of_week_7_fires_on_sundays_like_0() -> None:
    window = (ms("2026-01-01T00:00Z"), ms("2026-02-28T00:00Z"))
    sundays = occurrences("0 0 * * 7", "UTC", *window)
    assert sundays == occurrences("0 0 * * 0", "UTC", *window)
    assert sundays == occurrences("0 0 * * SUN", "UTC", *window)
    assert len(sundays) == 8
    assert {datetime.fromtimestamp(f / 1000, UTC).isoweekday() for f in sundays} == {7}


def test_window_excludes_its_start_and_includes_its_end() -> None:
    first, second = ms("2026-08-11T03:00Z"), ms("2026-08-12T03:00Z")
    assert occurrences("0 3 * * *", "UTC", first, second) == [second]
    assert occurrences("0 3 * * *", "UTC", first - 1, second - 1) == [first]
    assert occurrences("0 3 * * *", "UTC", first, first) == []


def test_empty_or_reversed_window_has_no_fires() -> None:
    assert occurrences("* * * * *", "UTC", ms("2026-01-02T00:00Z"), ms("2026-01-01T00:00Z")) == []


def test_fires_are_sorted_without_duplicates() -> None:
    fires = occurrences(
        "*/5 * * * *", "Australia/Lord_Howe", ms("2019-01-01T00:00Z"), ms("2021-01-01T00:00Z")
    )
    assert fires == sorted(set(fires))


def test_a_year_of_every_minute_has_every_minute_once() -> None:
    fires = occurrences("* * * * *", NEW_YORK, ms("2026-01-01T00:00Z"), ms("2027-01-01T00:00Z"))
    assert len(fires) == 365 * 24 * 60


# -- next_occurrences ------------------------------------------------------------------------


def test_next_occurrence_matches_the_spec_example() -> None:
    assert next_occurrences("0 3 * * *", "UTC", ms("2026-08-11T12:00Z"), 1) == [1786503600000]


def test_next_occurrences_are_the_first_n_fires_after_the_instant() -> None:
    after = ms("2026-03-01T00:00Z")
    window = occurrences("30 2 * * *", NEW_YORK, after, after + 20 * DAY_MS)
    assert next_occurrences("30 2 * * *", NEW_YORK, after, 10) == window[:10]
    assert next_occurrences("30 2 * * *", NEW_YORK, window[0], 1) == [window[1]]


def test_next_occurrences_reach_years_ahead_for_a_leap_day() -> None:
    fires = next_occurrences("0 0 29 2 *", "UTC", ms("2026-08-11T12:00Z"), 3)
    assert [iso(f) for f in fires] == [
        "2028-02-29T00:00Z",
        "2032-02-29T00:00Z",
        "2036-02-29T00:00Z",
    ]


def test_next_occurrences_of_zero_is_empty_and_negative_is_refused() -> None:
    assert next_occurrences("* * * * *", "UTC", 0, 0) == []
    with pytest.raises(FerryError) as caught:
        next_occurrences("* * * * *", "UTC", 0, -1)
    assert caught.value.code == "X_INVARIANT"
    assert caught.value.fix


# -- validate_zone ---------------------------------------------------------------------------


def test_unknown_zone_is_refused_in_the_spec_shape() -> None:
    with pytest.raises(FerryError) as caught:
        validate_zone("Bogota", owner='task "nightlyDigest"')
    refusal = caught.value
    assert refusal.code == "X_INVARIANT"
    assert refusal.message == (
        'task "nightlyDigest" has tz "Bogota", which is not a zone in the IANA tz database'
    )
    assert refusal.fix.startswith(
        'use the full zone id on task("nightlyDigest"), e.g. tz="America/Bogota"'
    )
    assert (
        'python -c "import zoneinfo; print(sorted(zoneinfo.available_timezones()))"' in refusal.fix
    )


@pytest.mark.parametrize(
    ("tz", "said"),
    [
        ("", "has no tz"),
        ("   ", "has no tz"),
        ("+02:00", "fixed offset"),
        ("-0500", "fixed offset"),
        ("UTC+2", "fixed offset"),
        ("GMT-3", "fixed offset"),
        ("Etc/GMT+2", "fixed offset"),
        ("localtime", "server's own zone"),
        ("Bogota", "not a zone in the IANA tz database"),
        ("america/bogota", "not a zone in the IANA tz database"),
        ("America", "not a zone in the IANA tz database"),
        ("zone.tab", "not a zone in the IANA tz database"),
        ("../etc/passwd", "not a zone in the IANA tz database"),
        ("/usr/share/zoneinfo/UTC", "not a zone in the IANA tz database"),
    ],
)
def test_missing_fixed_offset_and_unknown_zones_are_refused(tz: str, said: str) -> None:
    with pytest.raises(FerryError) as caught:
        validate_zone(tz, owner='task "nightlyDigest"')
    assert caught.value.code == "X_INVARIANT"
    assert caught.value.message.startswith('task "nightlyDigest" has ')
    assert said in caught.value.message
    assert 'task("nightlyDigest")' in caught.value.fix


def test_zone_refusal_without_an_owner_still_names_the_zone() -> None:
    with pytest.raises(FerryError) as caught:
        validate_zone("Bogota", owner=None)
    assert caught.value.message == 'tz "Bogota" is not a zone in the IANA tz database'
    assert caught.value.fix


@pytest.mark.parametrize(
    "tz", ["America/Bogota", "UTC", "Europe/Berlin", "Asia/Kolkata", "EST5EDT"]
)
def test_iana_zones_are_accepted(tz: str) -> None:
    assert validate_zone(tz, owner='task "nightlyDigest"').key == tz


def test_occurrences_refuse_a_bad_zone_and_a_bad_cron() -> None:
    with pytest.raises(FerryError) as bad_zone:
        occurrences("0 3 * * *", "Bogota", 0, DAY_MS)
    with pytest.raises(FerryError) as bad_cron:
        occurrences("@daily", "UTC", 0, DAY_MS)
    assert bad_zone.value.code == bad_cron.value.code == "X_INVARIANT"
