"""Standard 5-field cron: what parses to which values, and every form that is refused."""

from __future__ import annotations

import itertools
from datetime import date

import pytest

from ferry.errors import FerryError
from ferry.tasks._cron import CronExpression, describe_cron, parse_cron

OWNER = 'task "nightlyDigest"'


def _refusal(expr: str, owner: str | None = None) -> FerryError:
    with pytest.raises(FerryError) as caught:
        parse_cron(expr, owner=owner)
    return caught.value


# -- what parses, to which values ------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "minutes", "hours", "days_of_month", "months", "days_of_week"),
    [
        ("0 3 * * *", {0}, {3}, set(range(1, 32)), set(range(1, 13)), set(range(7))),
        ("*/15 * * * *", {0, 15, 30, 45}, set(range(24)), set(range(1, 32)), set(range(1, 13)),
         set(range(7))),
        ("5-10 9-17/4 1,15 6 1-5", set(range(5, 11)), {9, 13, 17}, {1, 15}, {6}, {1, 2, 3, 4, 5}),
        ("10/20 22/1 28-31/3 */5 0", {10, 30, 50}, {22, 23}, {28, 31}, {1, 6, 11}, {0}),
        ("0,30 1-2,23 * * 5-7", {0, 30}, {1, 2, 23}, set(range(1, 32)), set(range(1, 13)),
         {5, 6, 0}),
        ("59 23 31 12 6", {59}, {23}, {31}, {12}, {6}),
    ],
)  # fmt: skip
def test_each_field_parses_to_the_set_of_values_it_allows(
    expr: str,
    minutes: set[int],
    hours: set[int],
    days_of_month: set[int],
    months: set[int],
    days_of_week: set[int],
) -> None:
    cron = parse_cron(expr)
    assert cron.minutes == minutes
    assert cron.hours == hours
    assert cron.days_of_month == days_of_month
    assert cron.months == months
    assert cron.days_of_week == days_of_week


def test_parsed_expression_is_frozen_and_keeps_its_text() -> None:
    cron = parse_cron("  0 3 * * *  ")
    assert cron.expression == "0 3 * * *"
    assert isinstance(cron.minutes, frozenset)
    with pytest.raises(AttributeError):
        cron.minutes = frozenset()  # type: ignore[misc]


def test_month_and_weekday_names_are_case_insensitive() -> None:
    upper = parse_cron("0 9 * JAN-MAR MON-FRI")
    assert upper.months == {1, 2, 3}
    assert upper.days_of_week == {1, 2, 3, 4, 5}
    mixed = parse_cron("0 9 * jan-Mar mon-fri")
    assert (mixed.months, mixed.days_of_week) == (upper.months, upper.days_of_week)
    assert parse_cron("0 0 * dec,Jul sun,SAT").months == {7, 12}
    assert parse_cron("0 0 * dec,Jul sun,SAT").days_of_week == {0, 6}


@pytest.mark.parametrize("sunday", ["0", "7", "SUN", "sun"])
def test_day_of_week_7_is_sunday_like_0(sunday: str) -> None:
    assert parse_cron(f"0 0 * * {sunday}").days_of_week == {0}


def test_day_of_week_range_ending_at_7_folds_sunday_onto_0() -> None:
    assert parse_cron("0 0 * * 5-7").days_of_week == {5, 6, 0}
    assert parse_cron("0 0 * * */7").days_of_week == {0}


@pytest.mark.parametrize(
    ("expr", "dom_restricted", "dow_restricted"),
    [
        ("0 0 * * *", False, False),
        ("0 0 13 * *", True, False),
        ("0 0 * * 5", False, True),
        ("0 0 13 * 5", True, True),
        # vixie cron: a field is unrestricted iff it starts with "*", even "*/2"
        ("0 0 */2 * 1", False, True),
        ("0 0 1-31 * 0-6", True, True),
    ],
)
def test_a_day_field_is_unrestricted_exactly_when_it_starts_with_a_star(
    expr: str, dom_restricted: bool, dow_restricted: bool
) -> None:
    cron = parse_cron(expr)
    assert (cron.dom_restricted, cron.dow_restricted) == (dom_restricted, dow_restricted)


@pytest.mark.parametrize(
    ("expr", "is_interval"),
    [
        ("*/5 * * * *", True),
        ("* * * * *", True),
        ("0 * * * *", True),
        ("0 */2 * * *", True),
        ("*/5 1 * * *", True),
        ("30 1 * * *", False),
        ("0 3 * * *", False),
        ("0,30 1,2 * * *", False),
        # only "*" and "*/n" mark an interval; a spelled-out range is a list of fixed times
        ("0-59/5 1 * * *", False),
        ("5/10 1 * * *", False),
    ],
)
def test_minute_or_hour_field_of_star_or_star_step_marks_an_interval(
    expr: str, is_interval: bool
) -> None:
    assert parse_cron(expr).is_interval is is_interval


def test_both_day_fields_restricted_match_a_day_when_either_matches() -> None:
    cron = parse_cron("0 0 13 * 5")
    assert cron.matches_day(date(2026, 3, 13))  # a Friday the 13th
    assert cron.matches_day(date(2026, 1, 13))  # a Tuesday
    assert cron.matches_day(date(2026, 1, 2))  # a Friday
    assert not cron.matches_day(date(2026, 1, 14))


def test_one_restricted_day_field_alone_decides_the_day() -> None:
    by_date = parse_cron("0 0 13 * *")
    by_weekday = parse_cron("0 0 * * FRI")
    assert by_date.matches_day(date(2026, 1, 13))
    assert not by_date.matches_day(date(2026, 1, 2))
    assert by_weekday.matches_day(date(2026, 1, 2))
    assert not by_weekday.matches_day(date(2026, 1, 13))


def test_star_step_day_field_still_filters_but_is_anded_like_vixie_cron() -> None:
    cron = parse_cron("0 0 */2 * MON")  # odd days that are Mondays, not odd days OR Mondays
    assert cron.matches_day(date(2026, 1, 5))  # Monday the 5th
    assert not cron.matches_day(date(2026, 1, 12))  # Monday the 12th
    assert not cron.matches_day(date(2026, 1, 7))  # Wednesday the 7th


def test_month_field_gates_every_day() -> None:
    cron = parse_cron("0 0 13 JAN 5")
    assert cron.matches_day(date(2026, 1, 2))
    assert not cron.matches_day(date(2026, 2, 13))


def test_leap_day_is_a_real_date() -> None:
    assert parse_cron("0 0 29 2 *").days_of_month == {29}


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "named"),
    [
        # a seconds field (Quartz/Spring): 6 or 7 fields
        ("0 0 3 * * *", "6 fields"),
        ("0 0 3 * * ? 2026", "7 fields"),
        ("0 3 * *", "4 fields"),
        ("0 3 * * * * * *", "8 fields"),
        # aliases
        ("@hourly", "@ alias"),
        ("@daily", "@ alias"),
        ("@yearly", "@ alias"),
        ("@reboot", "@ alias"),
        ("@every 5m", "@ alias"),
        # out of range
        ("60 3 * * *", "minute field"),
        ("0 24 * * *", "hour field"),
        ("0 3 0 * *", "day-of-month field"),
        ("0 3 32 * *", "day-of-month field"),
        ("0 3 * 0 *", "month field"),
        ("0 3 * 13 *", "month field"),
        ("0 3 * * 8", "day-of-week field"),
        ("0 3-30 * * *", "hour field"),
        # steps
        ("*/0 * * * *", "minute field"),
        ("0 1-5/0 * * *", "hour field"),
        ("*/61 * * * *", "minute field"),
        ("*/x * * * *", "minute field"),
        ("*/ * * * *", "minute field"),
        ("*/-5 * * * *", "minute field"),
        # reversed ranges
        ("30-10 * * * *", "minute field"),
        ("0 22-2 * * *", "hour field"),
        ("0 0 * DEC-JAN *", "month field"),
        ("0 0 * * FRI-MON", "day-of-week field"),
        # empty parts
        ("1,,2 * * * *", "minute field"),
        ("0 3, * * *", "hour field"),
        ("0 ,3 * * *", "hour field"),
        ("-5 * * * *", "minute field"),
        ("5- * * * *", "minute field"),
        ("", "0 fields"),
        ("   ", "0 fields"),
        # garbage
        ("abc * * * *", "minute field"),
        ("MON * * * *", "minute field"),
        ("0 0 * * JAN", "day-of-week field"),
        ("0 0 * MON *", "month field"),
        ("0 0 * * MONDAY", "day-of-week field"),
        ("1.5 * * * *", "minute field"),
        ("+5 * * * *", "minute field"),
        ("²³ * * * *", "minute field"),
        ("** * * * *", "minute field"),
        ("*-5 * * * *", "minute field"),
        ("1-2-3 * * * *", "minute field"),
        # Quartz extensions
        ("0 0 ? * MON", "day-of-month field"),
        ("0 0 * * ?", "day-of-week field"),
        ("0 0 L * *", "day-of-month field"),
        ("0 0 L-3 * *", "day-of-month field"),
        ("0 0 * * 5L", "day-of-week field"),
        ("0 0 * * FRIL", "day-of-week field"),
        ("0 0 15W * *", "day-of-month field"),
        ("0 0 LW * *", "day-of-month field"),
        ("0 0 * * 5#3", "day-of-week field"),
        ("0 0 * * FRI#2", "day-of-week field"),
        # a day no chosen month has: the schedule would never fire
        ("0 0 30 2 *", "day-of-month field"),
        ("0 0 31 4,6,9,11 *", "day-of-month field"),
    ],
)
def test_anything_but_standard_five_field_cron_is_refused_naming_expression_and_field(
    expr: str, named: str
) -> None:
    refusal = _refusal(expr)
    assert refusal.code == "X_INVARIANT"
    assert f'cron "{expr}"' in refusal.message
    assert named in refusal.message
    assert refusal.fix.strip()


@pytest.mark.parametrize(
    ("expr", "mark"),
    [("0 0 ? * MON", "?"), ("0 0 L * *", "L"), ("0 0 15W * *", "W"), ("0 0 * * 5#3", "#")],
)
def test_quartz_marks_are_named_as_quartz_extensions(expr: str, mark: str) -> None:
    refusal = _refusal(expr)
    assert f'"{mark}" is a Quartz extension' in refusal.message


def test_refusal_names_the_owner_when_given() -> None:
    refusal = _refusal("61 3 * * *", owner=OWNER)
    assert refusal.message.startswith('task "nightlyDigest" has cron "61 3 * * *", which has ')
    assert 'minute field "61"' in refusal.message
    assert "outside 0-59" in refusal.message


def test_seconds_field_refusal_offers_the_five_field_form() -> None:
    assert '"0 3 * * *"' in _refusal("0 0 3 * * *").fix
    assert '"0 3 * * MON"' in _refusal("0 0 3 ? * MON 2026").fix


@pytest.mark.parametrize(
    ("alias", "spelled_out"),
    [
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@DAILY", "0 0 * * *"),
    ],
)
def test_alias_refusal_spells_out_the_equivalent_cron(alias: str, spelled_out: str) -> None:
    refusal = _refusal(alias)
    assert refusal.message == f'cron "{alias}" is an @ alias — ferry takes only the 5-field form'
    assert f'"{spelled_out}"' in refusal.fix
    parse_cron(spelled_out)


def test_reversed_range_fix_offers_the_wrapping_form() -> None:
    refusal = _refusal("0 22-2 * * *")
    assert "22-2 runs backwards" in refusal.message
    assert '"22-23,0-2"' in refusal.fix
    parse_cron("0 22-23,0-2 * * *")


def test_refusal_str_carries_code_message_and_fix() -> None:
    refusal = _refusal("@daily", owner=OWNER)
    assert str(refusal) == f"X_INVARIANT: {refusal.message}\nfix: {refusal.fix}"


# -- describe_cron -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "words"),
    [
        ("0 3 * * *", "at 03:00 every day"),
        ("*/5 * * * *", "every 5 minutes"),
        ("* * * * *", "every minute"),
        ("15 2 * * 1", "at 02:15 on Monday"),
        ("15 2 * * 7", "at 02:15 on Sunday"),
        ("0 * * * *", "every hour, on the hour"),
        ("0 */2 * * *", "every 2 hours, on the hour"),
        ("15 * * * *", "at minute 15 of every hour"),
        ("0 9 * JAN-MAR MON-FRI", "at 09:00 on Monday through Friday in January through March"),
        ("0 0 13 * 5", "at 00:00 on day 13 of the month or on Friday"),
        ("0 0 1 * *", "at 00:00 on day 1 of the month"),
        ("0 0 * 1 *", "at 00:00 every day in January"),
        ("0,30 9,17 * * *", "at 09:00, 09:30, 17:00 and 17:30 every day"),
        ("*/15 9-17 * * MON-FRI",
         "every 15 minutes during hours 9 through 17 on Monday through Friday"),
        ("0 9-17 * * *", "on the hour during hours 9 through 17"),
        ("*/7 * * * *", "at minutes 0, 7, 14, 21, 28, 35, 42, 49 and 56 of every hour"),
        ("0 0 * * SAT,SUN", "at 00:00 on Sunday and Saturday"),
    ],
)  # fmt: skip
def test_describe_says_the_schedule_in_words(expr: str, words: str) -> None:
    assert describe_cron(expr) == words


def test_describe_never_crashes_on_a_valid_expression() -> None:
    fields = [
        ["*", "0", "*/5", "*/7", "5-10", "0,30", "10/20", "59"],
        ["*", "0", "*/2", "*/5", "9-17", "1,13", "23"],
        ["*", "1", "*/2", "1-7", "13,31", "L"],
        ["*", "1", "JAN-MAR", "*/3", "2", "12"],
        ["*", "0", "7", "MON-FRI", "*/2", "SAT,SUN", "1-5/2"],
    ]
    described = 0
    for parts in itertools.product(*fields):
        expr = " ".join(parts)
        try:
            cron = parse_cron(expr)
        except FerryError:
            continue
        words = describe_cron(expr)
        assert isinstance(cron, CronExpression)
        assert words and words == words.strip()
        described += 1
    assert described > 5_000


def test_describe_refuses_what_parse_refuses() -> None:
    with pytest.raises(FerryError) as caught:
        describe_cron("@daily")
    assert caught.value.code == "X_INVARIANT"
