"""Standard 5-field cron — minute hour day-of-month month day-of-week — and nothing else.

One way to write a schedule: no seconds field, no ``@daily`` aliases, no Quartz ``? L W #``.
Every refusal is an ``X_INVARIANT`` naming the expression, the field, and what to write instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Final

from ferry.errors import FerryError

# fmt: off
_MONTH_NAMES: Final = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_WEEKDAY_NAMES: Final = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
# Spelled out here rather than read from ``calendar``, whose names follow the process locale.
_MONTH_WORDS: Final = ("January", "February", "March", "April", "May", "June", "July",
                       "August", "September", "October", "November", "December")
_WEEKDAY_WORDS: Final = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                         "Saturday")
# fmt: on
#: Longest each month can be; February counts its leap day, so "29 2" is a real (rare) date.
_MONTH_LENGTHS: Final = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ALIASES: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_INTERVAL_FIELD: Final = re.compile(r"\*(/\d+)?")
_EXAMPLE: Final = '"0 3 * * *" (03:00 every day) or "*/5 * * * *" (every 5 minutes)'


@dataclass(frozen=True)
class _Field:
    """One cron position: its name, the values it allows, and the names it accepts."""

    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    #: the value the first name stands for (JAN is 1, SUN is 0)
    names_start: int = 0


_FIELDS: Final = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day-of-month", 1, 31),
    _Field("month", 1, 12, _MONTH_NAMES, names_start=1),
    # 7 is Sunday as well as 0, as in every standard cron; parse_cron folds it onto 0.
    _Field("day-of-week", 0, 7, _WEEKDAY_NAMES),
)


@dataclass(frozen=True)
class CronExpression:
    """A parsed 5-field cron: the values each field allows, plus the flags the scheduler needs.

    Day matching is vixie cron's: when both day fields are restricted (neither starts with
    ``*``) a day matches if EITHER does; otherwise it must match both, which for a plain ``*``
    means only the restricted field counts.
    """

    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days_of_month: frozenset[int]
    months: frozenset[int]
    #: 0 is Sunday … 6 is Saturday (a written 7 is folded onto 0)
    days_of_week: frozenset[int]
    dom_restricted: bool
    dow_restricted: bool
    #: minute or hour field is ``*`` or ``*/n``: the schedule measures elapsed time, so it runs
    #: through both passes of a repeated (fall-back) hour instead of firing once.
    is_interval: bool

    def matches_day(self, day: date) -> bool:
        """Whether this schedule fires at all on the given calendar day."""
        if day.month not in self.months:
            return False
        dom_match = day.day in self.days_of_month
        dow_match = day.isoweekday() % 7 in self.days_of_week
        if self.dom_restricted and self.dow_restricted:
            return dom_match or dow_match
        return dom_match and dow_match


class _FieldRefusal(Exception):
    """What is wrong inside one field; parse_cron adds the expression and the field's name."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


def parse_cron(expr: str, *, owner: str | None = None) -> CronExpression:
    """Parse a standard 5-field cron expression, refusing anything else with X_INVARIANT."""
    # reads on with "has …" / "is …": 'task "x" has cron "E", which has …' or 'cron "E" has …'
    subject = f'{owner} has cron "{expr}", which' if owner else f'cron "{expr}"'
    text = expr.strip()
    if text.startswith("@"):
        raise _alias_refusal(subject, text)
    parts = text.split()
    if len(parts) != 5:
        raise _field_count_refusal(subject, parts)
    values: list[frozenset[int]] = []
    for field, part in zip(_FIELDS, parts, strict=True):
        try:
            values.append(_parse_field(part, field))
        except _FieldRefusal as refusal:
            raise FerryError(
                "X_INVARIANT",
                f'{subject} has {field.name} field "{part}": {refusal.problem}',
                refusal.fix,
            ) from None
    minutes, hours, days_of_month, months, days_of_week = values
    cron = CronExpression(
        expression=text,
        minutes=minutes,
        hours=hours,
        days_of_month=days_of_month,
        months=months,
        days_of_week=frozenset(day % 7 for day in days_of_week),
        dom_restricted=not parts[2].startswith("*"),
        dow_restricted=not parts[4].startswith("*"),
        is_interval=bool(
            _INTERVAL_FIELD.fullmatch(parts[0]) or _INTERVAL_FIELD.fullmatch(parts[1])
        ),
    )
    if not _has_real_day(cron):
        # Refused here rather than left to never fire: a schedule that matches no date is always
        # a typo, and "the next occurrence" of it would be a search with no end.
        raise FerryError(
            "X_INVARIANT",
            f'{subject} has day-of-month field "{parts[2]}": no such day falls in month field '
            f'"{parts[3]}", so the schedule would never fire',
            "pick a day every chosen month has (1-28 is safe in all of them), or add the months "
            "that have that day",
        )
    return cron


def _alias_refusal(subject: str, alias: str) -> FerryError:
    spelled_out = _ALIASES.get(alias.lower())
    if spelled_out is not None:
        fix = f'write it as 5-field cron: "{spelled_out}"'
    elif alias.lower() == "@reboot":
        fix = "a task fires on a schedule, not at process start — run start-up work from the app"
    else:
        fix = f"write it as minute hour day-of-month month day-of-week, e.g. {_EXAMPLE}"
    return FerryError(
        "X_INVARIANT", f"{subject} is an @ alias — ferry takes only the 5-field form", fix
    )


def _field_count_refusal(subject: str, parts: list[str]) -> FerryError:
    count = len(parts)
    if count in (6, 7):
        # Quartz/Spring order: seconds first, an optional year last, "?" for "no day".
        suggestion = " ".join(parts[1:6]).replace("?", "*")
        return FerryError(
            "X_INVARIANT",
            f"{subject} has {count} fields, not 5 — a seconds field (or a year field) is not "
            "standard cron",
            f"drop the seconds field{' and the year field' if count == 7 else ''}: "
            f'"{suggestion}" — a task fires at minute resolution',
        )
    return FerryError(
        "X_INVARIANT",
        f"{subject} has {count} field{'' if count == 1 else 's'}, not 5",
        f"write minute hour day-of-month month day-of-week, e.g. {_EXAMPLE}",
    )


def _parse_field(text: str, field: _Field) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        values.update(_parse_item(item, field))
    return frozenset(values)


def _parse_item(item: str, field: _Field) -> range:
    if not item:
        raise _FieldRefusal(
            "an empty list item", 'separate values with single commas, e.g. "1,15,30"'
        )
    base, slash, step_text = item.partition("/")
    step = _parse_step(step_text, field) if slash else 1
    if base == "*":
        return range(field.low, field.high + 1, step)
    first_text, dash, last_text = base.partition("-")
    first = _parse_value(first_text, field)
    if dash:
        last = _parse_value(last_text, field)
        if first > last:
            raise _FieldRefusal(
                f"the range {base} runs backwards",
                f"write ranges low to high; one that wraps around is two ranges: "
                f'"{first_text}-{field.high},{field.low}-{last_text}"',
            )
    else:
        # "a/n" means "from a to the end of the field, every n", as in most crons.
        last = field.high if slash else first
    return range(first, last + 1, step)


def _parse_step(text: str, field: _Field) -> int:
    span = field.high - field.low + 1
    if not _is_number(text):
        raise _FieldRefusal(
            f'"/{text}" is not a whole-number step',
            'write a step as a whole number after the slash, e.g. "*/5"',
        )
    step = int(text)
    if step == 0:
        raise _FieldRefusal(
            "a step of 0 never advances", f'a step is at least 1, e.g. "*/5" (at most {span})'
        )
    if step > span:
        raise _FieldRefusal(
            f"a step of {step} is longer than the whole field ({field.low}-{field.high})",
            f"a {field.name} step can be at most {span}; a longer interval needs a coarser field "
            "or an explicit list",
        )
    return step


def _parse_value(token: str, field: _Field) -> int:
    if _is_number(token):
        value = int(token)
        if not field.low <= value <= field.high:
            raise _FieldRefusal(
                f"{value} is outside {field.low}-{field.high}",
                f"use {field.name} values from {field.low} to {field.high}",
            )
        return value
    if token.upper() in field.names:
        return field.names.index(token.upper()) + field.names_start
    raise _unreadable(token, field)


def _is_number(text: str) -> bool:
    # isdigit alone accepts "²" and other digits int() cannot read
    return text.isascii() and text.isdigit()


def _unreadable(token: str, field: _Field) -> _FieldRefusal:
    if not token:
        return _FieldRefusal(
            "a range or a step is missing a number",
            'write both ends of a range and the number after a slash, e.g. "1-5" or "*/10"',
        )
    quartz = next((mark for mark, form in _QUARTZ_FORMS if form.fullmatch(token.upper())), None)
    if quartz is not None:
        return _FieldRefusal(
            f'"{quartz}" is a Quartz extension, not standard cron',
            _QUARTZ_FIXES[quartz],
        )
    allowed = f"numbers {field.low}-{field.high}"
    if field.names:
        allowed += f" or names {field.names[0]}-{field.names[-1]}"
    return _FieldRefusal(
        f'"{token}" is not a value of this field',
        f"write {allowed}, as *, a, a-b, */n, a-b/n, a/n or a list of those",
    )


#: how each Quartz day-field extension is written: 5#3, 15W, LW, L, L-3, 5L, FRIL, ?
_QUARTZ_FORMS: Final = (
    ("#", re.compile(r"\w+#\d+")),
    ("W", re.compile(r"(\d+|L)W")),
    ("L", re.compile(r"L(-\d+)?|(\d+|[A-Z]{3})L")),
    ("?", re.compile(r"\?")),
)
_QUARTZ_FIXES: Final = {
    "?": 'write "*" instead — standard cron ignores a "*" day field when the other is set',
    "L": "standard cron has no last-day (L): schedule days 28-31 and let the job skip the "
    "days that are not the month's last",
    "W": "standard cron has no nearest-weekday (W): schedule MON-FRI and pick the day in the job",
    "#": 'standard cron has no nth weekday (#): schedule days 1-7 with "*" weekdays and let the '
    'job check the weekday — "1-7 * MON" would fire on days 1-7 OR any Monday',
}


def _has_real_day(cron: CronExpression) -> bool:
    if cron.dom_restricted and cron.dow_restricted:
        return True  # either field may match, and every weekday comes round every month
    return any(
        day <= _MONTH_LENGTHS[month - 1] for month in cron.months for day in cron.days_of_month
    )


def describe_cron(expr: str) -> str:
    """The schedule in plain English, e.g. "at 03:00 every day" or "every 5 minutes"."""
    cron = parse_cron(expr)
    days = _describe_days(cron)
    minutes, hours = sorted(cron.minutes), sorted(cron.hours)
    if len(minutes) * len(hours) <= 4:
        clock_times = [f"{hour:02d}:{minute:02d}" for hour in hours for minute in minutes]
        return f"at {_join(clock_times)} {days or 'every day'}"
    return " ".join(part for part in (_describe_within_day(minutes, hours), days) if part)


def _describe_within_day(minutes: list[int], hours: list[int]) -> str:
    minute_step = _step_of(minutes, 0, 59)
    hour_step = _step_of(hours, 0, 23)
    if hour_step == 1:
        hour_part = ""
    elif hour_step is not None and 24 % hour_step == 0:
        hour_part = f"in every {_ordinal(hour_step)} hour"
    else:
        hour_part = f"during hour{_plural(len(hours))} {_runs(hours)}"
    if minutes == [0]:
        if hour_step == 1:
            return "every hour, on the hour"
        if hour_step is not None and 24 % hour_step == 0:
            return f"every {hour_step} hours, on the hour"
        return f"on the hour {hour_part}"
    if minute_step == 1:
        minute_part = "every minute"
    elif minute_step is not None and 60 % minute_step == 0:
        minute_part = f"every {minute_step} minutes"
    else:
        minute_part = f"at minute{_plural(len(minutes))} {_runs(minutes)}"
        hour_part = hour_part or "of every hour"
    return " ".join(part for part in (minute_part, hour_part) if part)


def _describe_days(cron: CronExpression) -> str:
    days_of_month, days_of_week = sorted(cron.days_of_month), sorted(cron.days_of_week)
    on_days_of_month = f"on day{_plural(len(days_of_month))} {_runs(days_of_month)} of the month"
    on_days_of_week = f"on {_runs(days_of_week, _WEEKDAY_WORDS)}"
    some_days_of_month = len(days_of_month) < 31
    some_days_of_week = len(days_of_week) < 7
    if some_days_of_month and some_days_of_week:
        # the OR/AND rule of CronExpression.matches_day, said out loud
        joiner = " or " if cron.dom_restricted and cron.dow_restricted else " that fall "
        days = on_days_of_month + joiner + on_days_of_week
    elif some_days_of_month:
        days = on_days_of_month
    elif some_days_of_week:
        days = on_days_of_week
    else:
        days = ""
    if len(cron.months) == 12:
        return days
    months = "in " + _runs([month - 1 for month in sorted(cron.months)], _MONTH_WORDS)
    return f"{days or 'every day'} {months}"


def _step_of(values: list[int], low: int, high: int) -> int | None:
    """The n of ``*/n`` when values run low, low+n, … to the field's end; None otherwise."""
    if len(values) < 2:
        return None
    step = values[1] - values[0]
    return step if values == list(range(low, high + 1, step)) else None


def _runs(values: list[int], words: tuple[str, ...] = ()) -> str:
    """Sorted values as "1 through 5, 7 and 9", spelled as words when given."""

    def spell(value: int) -> str:
        return words[value] if words else str(value)

    groups: list[list[int]] = []
    for value in values:
        if groups and value == groups[-1][-1] + 1:
            groups[-1].append(value)
        else:
            groups.append([value])
    items: list[str] = []
    for group in groups:
        if len(group) > 2:
            items.append(f"{spell(group[0])} through {spell(group[-1])}")
        else:
            items.extend(spell(value) for value in group)
    return _join(items)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _plural(count: int) -> str:
    return "" if count == 1 else "s"


def _ordinal(number: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10 if number % 100 not in (11, 12, 13) else 0)
    return f"{number}{suffix or 'th'}"
