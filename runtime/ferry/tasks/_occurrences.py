"""When a cron schedule fires in an IANA zone: epoch-ms instants, with ferry's DST rules.

The rules (spec: Scheduled tasks, "tz is required for a reason"):

* Fall-back overlap, a wall time that happens twice. A *fixed* time (``30 1 * * *``) fires once,
  on the first pass: "01:30 every night" means one run a night. An *interval* (the minute or hour
  field is ``*`` or ``*/n``) fires on both passes, because the repeated hour is real elapsed time.
* Spring-forward gap, a wall time that never happens: "it has no instant — the framework fires it
  at the zone's next valid instant", for every schedule, fixed or interval. That instant is the
  transition itself (``30 2 * * *`` in New York fires at 03:00 EDT). Every gap wall time of one
  schedule lands on it, so a night's gap times make one fire there: ``*/10 2 * * *`` fires once,
  at 03:00 EDT, on the night 02:00 is skipped, and ``*/5 * * * *`` fires at 03:00 EDT once for
  the skipped hour and its own 03:00 together.
* Days match as in standard cron: with both day fields restricted, either one is enough.

The walk is over local calendar days, never over UTC minutes. A day the schedule skips costs one
check; a day with one UTC offset throughout turns its wall times into instants with integer
arithmetic; only a day holding a transition is resolved wall time by wall time.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from datetime import UTC, date, datetime, time, timedelta
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from ferry.errors import FerryError
from ferry.tasks._cron import CronExpression, parse_cron

_DAY: Final = timedelta(days=1)
_DAY_MS: Final = 86_400_000
_YEAR_MS: Final = 366 * _DAY_MS
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
# "+02:00", "-0500", "UTC+2", "GMT-3", "Etc/GMT+2": a fixed offset drifts an hour twice a year
# against the local time it was meant to be, which is what a schedule's tz is for.
_FIXED_OFFSET: Final = re.compile(r"((Etc/)?(UTC|GMT|Z))?\s*[+-]\d{1,2}(:?\d{2})?", re.IGNORECASE)
_LIST_ZONES: Final = 'python -c "import zoneinfo; print(sorted(zoneinfo.available_timezones()))"'


def validate_zone(tz: str, *, owner: str | None = None) -> ZoneInfo:
    """The IANA zone named ``tz``; refuses a missing, fixed-offset, server-local or unknown one."""
    on = f" on {_declaration(owner)}" if owner else ""
    if not tz or not tz.strip():
        raise FerryError(
            "X_INVARIANT",
            f"{owner} has no tz" if owner else "no tz was given",
            f'add an explicit IANA zone{on}, e.g. tz="UTC" or tz="Europe/Berlin" — server-local '
            "time moves whenever the container's TZ does",
        )
    subject = f'{owner} has tz "{tz}", which' if owner else f'tz "{tz}"'
    if _FIXED_OFFSET.fullmatch(tz):
        raise FerryError(
            "X_INVARIANT",
            f"{subject} is a fixed offset, not a zone — it drifts by an hour twice a year "
            "against local time",
            f'use the zone of the place whose clock you mean{on}, e.g. tz="Europe/Berlin", or '
            'tz="UTC" for a clock with no DST',
        )
    if tz == "localtime":
        # zoneinfo resolves it to /etc/localtime: the server's zone under a zone-like name.
        raise FerryError(
            "X_INVARIANT",
            f"{subject} is the server's own zone — the schedule would move whenever the "
            "container's TZ does",
            f'name the zone itself{on}, e.g. tz="UTC" or tz="Europe/Berlin"',
        )
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # ValueError: a path-like or non-TZif key; OSError: a directory such as "America".
        raise FerryError(
            "X_INVARIANT",
            f"{subject} is not a zone in the IANA tz database",
            f'use the full zone id{on}, e.g. tz="{_zone_like(tz)}" — list the valid ones with: '
            f"{_LIST_ZONES}",
        ) from None


def occurrences(cron: str, tz: str, start_ms: int, end_ms: int) -> list[int]:
    """Every instant (epoch ms) at which ``cron`` fires in ``tz`` within (start_ms, end_ms]."""
    return _fires_between(parse_cron(cron), validate_zone(tz), start_ms, end_ms)


def next_occurrences(cron: str, tz: str, after_ms: int, count: int) -> list[int]:
    """The first ``count`` instants (epoch ms) at which ``cron`` fires in ``tz`` after after_ms."""
    if count < 0:
        raise FerryError(
            "X_INVARIANT",
            f"next_occurrences was asked for {count} occurrences",
            "ask for zero or more",
        )
    schedule, zone = parse_cron(cron), validate_zone(tz)
    found: list[int] = []
    window_start, span = after_ms, _DAY_MS
    # Ends: parse_cron refuses a schedule that matches no real date, and every date comes round.
    while len(found) < count:
        window_end = window_start + span
        found.extend(_fires_between(schedule, zone, window_start, window_end))
        window_start, span = window_end, min(span * 2, _YEAR_MS)
    return found[:count]


def _fires_between(
    schedule: CronExpression, zone: ZoneInfo, start_ms: int, end_ms: int
) -> list[int]:
    """The fire instants in (start_ms, end_ms], sorted, each once."""
    if end_ms <= start_ms:
        return []
    walls_ms = sorted(
        (hour * 3600 + minute * 60) * 1000 for hour in schedule.hours for minute in schedule.minutes
    )
    # A day of margin each side: where a repeated hour straddles midnight, the local date runs
    # backwards for a while, so a fire can sit on the date before the window's start or after its
    # end. The trim below is exact.
    day = _local_date(start_ms, zone) - _DAY
    last_day = _local_date(end_ms, zone) + _DAY
    fires: list[int] = []
    while day <= last_day:
        if schedule.matches_day(day):
            fires.extend(_day_fires(day, zone, walls_ms, schedule.is_interval))
        day += _DAY
    # Days come in order and a steady day's fires are already sorted, so this sort is near-linear.
    fires.sort()
    in_window = fires[bisect_right(fires, start_ms) : bisect_right(fires, end_ms)]
    return list(dict.fromkeys(in_window))  # a night's gap wall times fire once, together


def _day_fires(day: date, zone: ZoneInfo, walls_ms: list[int], is_interval: bool) -> list[int]:
    """The instants one local day fires at; ``walls_ms`` are its wall times as ms after 00:00."""
    midnight_ms = (day.toordinal() - _EPOCH_ORDINAL) * _DAY_MS  # the wall clock read as UTC
    offset_s = _steady_offset_s(day, zone)
    if offset_s is not None:
        base_ms = midnight_ms - offset_s * 1000
        return [base_ms + wall_ms for wall_ms in walls_ms]
    fires: list[int] = []
    for wall_ms in walls_ms:
        fires.extend(_wall_fires((midnight_ms + wall_ms) // 1000, zone, is_interval))
    return fires


def _steady_offset_s(day: date, zone: ZoneInfo) -> int | None:
    """The day's UTC offset if it holds from midnight to midnight; None on a transition day."""
    # Both readings of both midnights: a repeated hour can straddle midnight (St John's fell back
    # from 00:01 to 23:01 until 2011). Sampling the ends suffices because no zone in the tz
    # database changes offset twice within a day.
    midnights = (datetime.combine(day, time(), zone), datetime.combine(day + _DAY, time(), zone))
    offsets = {_offset_s(midnight.replace(fold=fold)) for midnight in midnights for fold in (0, 1)}
    return offsets.pop() if len(offsets) == 1 else None


def _wall_fires(wall_s: int, zone: ZoneInfo, is_interval: bool) -> list[int]:
    """The instants (ms) one wall time fires at; ``wall_s`` is the wall clock read as UTC."""
    wall = datetime.fromtimestamp(wall_s, UTC).replace(tzinfo=zone)
    first_reading = wall_s - _offset_s(wall)
    second_reading = wall_s - _offset_s(wall.replace(fold=1))
    if first_reading == second_reading:
        return [first_reading * 1000]
    earlier, later = sorted((first_reading, second_reading))
    if _wall_at_s(earlier, zone) == wall_s:
        # Both readings are real: a fall-back overlap. A fixed time is one run a night, so only
        # the first pass; an interval counts elapsed time, and the repeated hour is elapsed time.
        return [earlier * 1000, later * 1000] if is_interval else [earlier * 1000]
    # Neither reading is real: a spring-forward gap. Any schedule fires at the zone's next
    # valid instant (the spec states no exception); the caller merges a night's gap times.
    return [_gap_end_s(earlier, later, zone) * 1000]


def _gap_end_s(before_s: int, after_s: int, zone: ZoneInfo) -> int:
    """The zone's next valid instant after a gap: the first second on the later offset."""
    later_offset = _offset_s(datetime.fromtimestamp(after_s, zone))
    # invariant: before_s is on the earlier offset, after_s on the later one
    while after_s - before_s > 1:
        middle = (before_s + after_s) // 2
        if _offset_s(datetime.fromtimestamp(middle, zone)) == later_offset:
            after_s = middle
        else:
            before_s = middle
    return after_s


def _wall_at_s(instant_s: int, zone: ZoneInfo) -> int:
    """The zone's wall clock at an instant, read as UTC seconds."""
    return instant_s + _offset_s(datetime.fromtimestamp(instant_s, zone))


def _offset_s(moment: datetime) -> int:
    """An aware moment's UTC offset in whole seconds (a ZoneInfo always has one)."""
    return (moment.utcoffset() or timedelta()) // timedelta(seconds=1)


def _local_date(instant_ms: int, zone: ZoneInfo) -> date:
    return datetime.fromtimestamp(instant_ms // 1000, zone).date()


def _declaration(owner: str) -> str:
    """Where the fix goes: 'task "nightlyDigest"' becomes 'task("nightlyDigest")'."""
    call = re.fullmatch(r'(\w+) (".*")', owner)
    return f"{call[1]}({call[2]})" if call else owner


def _zone_like(tz: str) -> str:
    """A real zone id ending in what was written ("Bogota" -> "America/Bogota"), or an example."""
    city = tz.strip().replace(" ", "_").lower()
    matches = sorted(zone for zone in available_timezones() if zone.lower().endswith(f"/{city}"))
    return matches[0] if matches else "Europe/Berlin"
